// Channel types this product has no adapter for (kept from the reference so imported channels stay valid):
// task APIs (Midjourney, Suno, Kling, Jimeng, Vidu, DoubaoVideo, Sora) and wire protocols no adapter speaks
// (PaLM, Baidu v1, Zhipu v3, Xunfei, AIProxyLibrary, Tencent, AWS, Cohere, Dify, Cloudflare, VertexAI, Coze,
// Replicate). The same list as UNTESTABLE in src/gateway/channel-tests/service.ts (a console test compares
// them). No imports: the test reads this file in Node.
export const NOT_RELAYED: ReadonlySet<number> = new Set([2, 5, 36, 50, 51, 52, 54, 55, 11, 15, 16, 18, 21, 23, 33, 34, 37, 39, 41, 49, 56]);

/** Types never offered for a new channel: Unknown (0) and the reference's placeholders (Dummy…). */
export const hiddenType = (id: number, name: string) => id === 0 || /^Dummy/i.test(name);
