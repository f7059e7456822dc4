/**
 * A strict parser for the YAML the docs use (no YAML package is installed): block mappings and sequences,
 * `|`/`>` block scalars, plain, single- and double-quoted scalars, comments. Anything outside that subset
 * (flow collections, anchors, tags, tabs, a plain scalar holding ": ") fails, so what it accepts reads the
 * same in a full YAML parser. Scalars stay strings.
 */
export function parseYamlSubset(src: string): unknown {
  const raw = src.split('\n');
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`YAML line ${i + 1}: ${why}: ${JSON.stringify(raw[i])}`);
  };
  const indentOf = (l: string) => l.length - l.trimStart().length;
  const skip = () => {
    while (i < raw.length && /^\s*(#.*)?$/.test(raw[i]!)) i++;
  };
  for (const [n, l] of raw.entries()) if (/^\s*\t/.test(l)) throw new Error(`YAML line ${n + 1}: tab in indentation`);

  function scalar(t: string): string {
    if (t.startsWith('"')) {
      try {
        return JSON.parse(t) as string;
      } catch {
        return fail('a double-quoted scalar this parser does not read');
      }
    }
    if (t.startsWith("'")) {
      if (!/^'(?:[^']|'')*'$/.test(t)) fail('an unterminated single-quoted scalar');
      return t.slice(1, -1).replaceAll("''", "'");
    }
    const plain = t.replace(/\s+#.*$/, '');
    if (/^[[\]{}&*!|>%@`,]/.test(plain) || plain.includes(': ') || plain.endsWith(':')) fail('a plain scalar that needs quotes');
    return plain;
  }

  function block(indent: number, style: string): string {
    const lines: string[] = [];
    let inner = -1;
    while (i < raw.length) {
      const l = raw[i]!;
      if (l.trim() === '') {
        lines.push('');
        i++;
        continue;
      }
      const ind = indentOf(l);
      if (ind <= indent) break;
      if (inner < 0) inner = ind;
      if (ind < inner) fail('a block scalar line indented less than its first line');
      lines.push(l.slice(inner));
      i++;
    }
    while (lines.length && lines.at(-1) === '') lines.pop();
    const text = style.startsWith('|') ? lines.join('\n') : lines.join(' ');
    return style.endsWith('-') ? text : text + '\n';
  }

  function node(indent: number): unknown {
    skip();
    if (i >= raw.length || indentOf(raw[i]!) < indent) return null;
    const ind = indentOf(raw[i]!);
    return raw[i]!.trimStart().startsWith('-') ? sequence(ind) : mapping(ind);
  }

  function sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    for (skip(); i < raw.length; skip()) {
      const l = raw[i]!;
      const ind = indentOf(l);
      if (ind < indent || !l.trimStart().startsWith('-')) break;
      if (ind > indent) fail('unexpected indentation');
      const rest = l.slice(ind + 1);
      if (rest.trim() === '') {
        i++;
        out.push(node(ind + 1));
      } else if (!rest.startsWith(' ')) {
        fail('"-" without a space');
      } else if (/^(?:[^\s"'#][^:]*?|"[^"]*"|'[^']*'):(?:\s|$)/.test(rest.trim())) {
        // "- key: value": the item is a mapping whose keys sit where this key starts.
        const at = ind + 1 + indentOf(rest);
        raw[i] = ' '.repeat(at) + rest.trim();
        out.push(mapping(at));
      } else {
        i++;
        out.push(scalar(rest.trim()));
      }
    }
    return out;
  }

  function mapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (skip(); i < raw.length; skip()) {
      const l = raw[i]!;
      const ind = indentOf(l);
      if (ind < indent || l.trimStart().startsWith('- ')) break;
      if (ind > indent) fail('unexpected indentation');
      const m = /^([^\s"'#][^:]*?|"[^"]*"|'[^']*'):(?:\s+(.*))?$/.exec(l.trim());
      if (!m) return fail('not a "key: value" line');
      const key = scalar(m[1]!);
      if (key in out) fail(`duplicate key ${key}`);
      const rest = (m[2] ?? '').trim();
      i++;
      if (rest === '' || rest.startsWith('#')) {
        skip();
        const next = raw[i];
        if (next !== undefined && indentOf(next) === indent && next.trimStart().startsWith('- ')) out[key] = sequence(indent);
        else out[key] = node(indent + 1);
      } else if (/^[|>]-?$/.test(rest)) {
        out[key] = block(indent, rest);
      } else {
        out[key] = scalar(rest);
      }
    }
    return out;
  }

  const doc = node(0);
  skip();
  if (i < raw.length) fail('left over');
  return doc;
}
