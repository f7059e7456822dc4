import http from 'node:http';

/** A loopback fake of the WeChat server: GET /api/wechat/user?code= with the server token → {success, data: openid}. */
export async function startFakeWeChat(token: string) {
  const codes = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname !== '/api/wechat/user') return res.end(JSON.stringify({ success: false, message: 'not found' }));
    if (req.headers.authorization !== token) return res.end(JSON.stringify({ success: false, message: 'unauthorized' }));
    const code = url.searchParams.get('code') ?? '';
    const openId = codes.get(code);
    codes.delete(code);
    res.end(JSON.stringify(openId ? { success: true, message: '', data: openId } : { success: false, message: 'invalid code' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    /** Registers a one-time code for an openid (what scanning the QR code does). */
    issue(code: string, openId: string) {
      codes.set(code, openId);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
