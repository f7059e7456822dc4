import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The raw message with quoted-printable soft breaks undone (good enough to search for codes and links). */
  text: string;
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
        const text = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject: /^Subject: (.*)$/m.exec(raw)?.[1] ?? '',
          text,
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
  const m = /\b(\d{6})\b/.exec(mail.text.split(/\r?\n\r?\n/).slice(1).join('\n'));
  if (!m) throw new Error('no code in mail');
  return m[1];
}
