import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The raw message with quoted-printable soft breaks undone (good enough to search for codes and links). */
  text: string;
}

function qp(s: string): string {
  const bytes: number[] = [];
  const flat = s.replace(/=\r?\n/g, '');
  for (let i = 0; i < flat.length; i++) {
    if (flat[i] === '=' && /^[0-9A-F]{2}$/i.test(flat.slice(i + 1, i + 3))) {
      bytes.push(parseInt(flat.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(flat[i], 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Headers and a single-part body decoded (encoded-word subject, base64 or quoted-printable body). */
function decode(raw: string): { subject: string; text: string } {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
  const body = raw.slice(split).trim();
  const rawSubject = /^Subject: (.*)$/m.exec(head)?.[1] ?? '';
  const subject = rawSubject.replace(/=\?UTF-8\?([BQ])\?([^?]*)\?=\s*/gi, (_, enc: string, data: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : qp(data.replace(/_/g, ' ')),
  );
  const cte = /^Content-Transfer-Encoding: (.*)$/im.exec(head)?.[1]?.trim().toLowerCase();
  const text = cte === 'base64' ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8') : cte === 'quoted-printable' ? qp(body) : body;
  return { subject, text };
}

/** A real SMTP server on 127.0.0.1 (smtp-server) that keeps every message it accepts. */
export async function startSmtp(opts: { failRecipients?: string[] } = {}) {
  const messages: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, cb) {
      if (opts.failRecipients?.includes(address.address.toLowerCase())) return cb(new Error('mailbox unavailable'));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          ...decode(raw),
        });
        for (const w of waiters.splice(0)) w();
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    /** Waits until `count` messages have arrived to `to` (or anyone), then returns them. */
    async waitFor(to: string | null, count = 1, timeoutMs = 5000): Promise<ReceivedMail[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = messages.filter((m) => to === null || m.to.includes(to));
        if (got.length >= count) return got;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} mail(s) to ${to}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first six-digit code in a message. */
export function codeIn(mail: ReceivedMail): string {
  const m = /(?<!\d)(\d{6})(?!\d)/.exec(mail.text);
  if (!m) throw new Error('no code in mail');
  return m[1];
}
