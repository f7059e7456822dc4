// Ready-to-run snippets for a new key: the edge's base URL and the key filled in, one per client.
import { edgeAnthropic, edgeUrl } from '../format';

export interface Snippet {
  id: 'curl' | 'python' | 'node' | 'claude';
  /** A product name, the same in every language. */
  label: string;
  code: string;
}

export function snippets(key: string, model: string, base = edgeUrl, anthropic = edgeAnthropic): Snippet[] {
  const v1 = `${base}/v1`;
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] });
  const list: Snippet[] = [
    {
      id: 'curl',
      label: 'curl',
      code: [`curl ${v1}/chat/completions \\`, `  -H "Authorization: Bearer ${key}" \\`, '  -H "Content-Type: application/json" \\', `  -d '${body}'`].join('\n'),
    },
    {
      id: 'python',
      label: 'OpenAI SDK (Python)',
      code: [
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${v1}", api_key="${key}")`,
        `reply = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello"}])`,
        'print(reply.choices[0].message.content)',
      ].join('\n'),
    },
    {
      id: 'node',
      label: 'OpenAI SDK (Node.js)',
      code: [
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${v1}', apiKey: '${key}' });`,
        `const reply = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });`,
        'console.log(reply.choices[0].message.content);',
      ].join('\n'),
    },
  ];
  if (anthropic) {
    list.push({
      id: 'claude',
      label: 'Claude Code / Anthropic SDK',
      code: [
        '# Claude Code',
        `export ANTHROPIC_BASE_URL=${base}`,
        `export ANTHROPIC_AUTH_TOKEN=${key}`,
        'claude',
        '',
        '# Anthropic SDK (Python)',
        'import anthropic',
        `client = anthropic.Anthropic(base_url="${base}", api_key="${key}")`,
      ].join('\n'),
    });
  }
  return list;
}
