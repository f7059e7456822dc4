import { jsonObject } from '../../kit/json/object.js';
/** Channel type constants 0–57 of the reference (name, default base URL). */
export const CHANNEL_TYPES: Record<number, { name: string; baseUrl: string }> = {};
const defs: [number, string, string?][] = [
  [0, 'Unknown'], [1, 'OpenAI', 'https://api.openai.com'], [2, 'Midjourney'], [3, 'Azure'], [4, 'Ollama', 'http://localhost:11434'],
  [5, 'MidjourneyPlus'], [6, 'OpenAIMax'], [7, 'OhMyGPT'], [8, 'Custom'], [9, 'AILS'], [10, 'AIProxy'], [11, 'PaLM'],
  [12, 'API2GPT'], [13, 'AIGC2D'], [14, 'Anthropic', 'https://api.anthropic.com'], [15, 'Baidu', 'https://aip.baidubce.com'],
  [16, 'Zhipu', 'https://open.bigmodel.cn'], [17, 'Ali', 'https://dashscope.aliyuncs.com'], [18, 'Xunfei'], [19, '360'],
  [20, 'OpenRouter', 'https://openrouter.ai/api'], [21, 'AIProxyLibrary'], [22, 'FastGPT'], [23, 'Tencent'],
  [24, 'Gemini', 'https://generativelanguage.googleapis.com'], [25, 'Moonshot', 'https://api.moonshot.cn'],
  [26, 'ZhipuV4', 'https://open.bigmodel.cn'], [27, 'Perplexity'], [28, 'Dummy28'], [29, 'Dummy29'], [30, 'Dummy30'],
  [31, 'LingYiWanWu'], [32, 'Dummy32'], [33, 'AWS'], [34, 'Cohere'], [35, 'MiniMax', 'https://api.minimax.chat'], [36, 'SunoAPI'],
  [37, 'Dify'], [38, 'Jina', 'https://api.jina.ai'], [39, 'Cloudflare'], [40, 'SiliconFlow', 'https://api.siliconflow.cn'], [41, 'VertexAI'],
  [42, 'Mistral'], [43, 'DeepSeek', 'https://api.deepseek.com'], [44, 'MokaAI'], [45, 'VolcEngine', 'https://ark.cn-beijing.volces.com'],
  [46, 'BaiduV2'], [47, 'Xinference'], [48, 'xAI', 'https://api.x.ai'], [49, 'Coze'], [50, 'Kling'], [51, 'Jimeng'], [52, 'Vidu'],
  [53, 'Submodel'], [54, 'DoubaoVideo'], [55, 'Sora'], [56, 'Replicate'], [57, 'Codex', 'https://chatgpt.com'],
];
for (const [id, name, baseUrl] of defs) CHANNEL_TYPES[id] = { name, baseUrl: baseUrl ?? '' };

export const TYPE_VERTEX = 41;
export const TYPE_CODEX = 57;
export const MAX_TYPE = 57;

export const STATUS = { enabled: 1, manual: 2, auto: 3 } as const;

/** other_info after a status change: its reason and time recorded, every other field kept. */
export function withStatusReason(otherInfo: string, reason: string, now: number): string {
  return JSON.stringify({ ...jsonObject(otherInfo), status_reason: reason, status_time: now });
}

/** Splits a comma list, trimming and dropping empties and duplicates. */
export function splitList(value: string | null | undefined): string[] {
  return [...new Set((value ?? '').split(',').map((s) => s.trim()).filter(Boolean))];
}

/** Keys of a multi-key channel: a JSON array (Vertex) or one key per line. */
export function splitKeys(text: string): string[] {
  const t = text.trim();
  if (t.startsWith('[')) {
    try {
      const arr = JSON.parse(t);
      if (Array.isArray(arr)) return arr.map((k) => (typeof k === 'string' ? k : JSON.stringify(k))).filter((k) => k.trim() !== '');
    } catch {
      /* not JSON: fall back to lines */
    }
  }
  return t.split('\n').map((k) => k.trim()).filter(Boolean);
}

export interface ChannelInfo {
  is_multi_key: boolean;
  multi_key_size: number;
  multi_key_status_list: Record<string, number>;
  multi_key_disabled_reason: Record<string, string>;
  multi_key_disabled_time: Record<string, number>;
  multi_key_polling_index: number;
  multi_key_mode: string;
}

export function parseInfo(text: string | null | undefined): ChannelInfo {
  let v: Partial<ChannelInfo> = {};
  try {
    v = JSON.parse(text || '{}') ?? {};
  } catch {
    v = {};
  }
  return {
    is_multi_key: !!v.is_multi_key,
    multi_key_size: v.multi_key_size ?? 0,
    multi_key_status_list: v.multi_key_status_list ?? {},
    multi_key_disabled_reason: v.multi_key_disabled_reason ?? {},
    multi_key_disabled_time: v.multi_key_disabled_time ?? {},
    multi_key_polling_index: v.multi_key_polling_index ?? 0,
    multi_key_mode: v.multi_key_mode ?? 'random',
  };
}

/** Keeps the status maps inside 0..size-1 after the key list changed. */
export function resizeInfo(info: ChannelInfo, size: number): ChannelInfo {
  const keep = <T>(m: Record<string, T>) => Object.fromEntries(Object.entries(m).filter(([k]) => Number(k) < size));
  return {
    ...info,
    multi_key_size: size,
    multi_key_status_list: keep(info.multi_key_status_list),
    multi_key_disabled_reason: keep(info.multi_key_disabled_reason),
    multi_key_disabled_time: keep(info.multi_key_disabled_time),
    multi_key_polling_index: info.multi_key_polling_index < size ? info.multi_key_polling_index : 0,
  };
}
