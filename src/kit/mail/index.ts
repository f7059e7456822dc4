import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface MailResult {
  delivered: boolean;
  via: 'smtp' | 'outbox';
}

export interface Mailer {
  /** Sends one message. Never throws: a failure is logged (without the body) and reported as delivered=false. */
  send(message: MailMessage): Promise<MailResult>;
  close(): void;
}

export interface MailerOptions {
  /** smtp:// or smtps:// URL; empty writes .eml files to outboxDir instead. */
  smtpUrl: string;
  from: string;
  outboxDir: string;
  log: Logger;
  /** Connection and socket timeouts of the SMTP client. */
  timeoutMs?: number;
}

/** Hides the local part of an address for logs: a***@example.com. */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${address[0]}***${address.slice(at)}`;
}

/**
 * Mail over SMTP (nodemailer), or, with no SMTP configured, one RFC 822 .eml file per message in the
 * outbox directory. Log lines name the recipient (masked) and the subject, never the body.
 */
export function createMailer(opts: MailerOptions): Mailer {
  const timeout = opts.timeoutMs ?? 10_000;
  const smtp = opts.smtpUrl
    ? nodemailer.createTransport({ url: opts.smtpUrl, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout })
    : null;
  const outbox = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  return {
    async send(m) {
      const mail = { from: opts.from, to: m.to, subject: m.subject, text: m.text, html: m.html };
      const to = maskAddress(m.to);
      if (smtp) {
        try {
          await smtp.sendMail(mail);
          opts.log.info({ to, subject: m.subject }, 'mail sent over SMTP');
          return { delivered: true, via: 'smtp' };
        } catch (e) {
          const err = e as { code?: string; responseCode?: number };
          opts.log.warn({ to, subject: m.subject, code: err.code, responseCode: err.responseCode }, 'mail delivery failed');
          return { delivered: false, via: 'smtp' };
        }
      }
      try {
        const info = await outbox.sendMail(mail);
        fs.mkdirSync(opts.outboxDir, { recursive: true, mode: 0o700 });
        const file = path.join(opts.outboxDir, `${Date.now()}-${crypto.randomBytes(4).toString('hex')}.eml`);
        fs.writeFileSync(file, info.message as Buffer, { mode: 0o600 });
        opts.log.info({ to, subject: m.subject, file }, 'SMTP_URL not set: mail written to the outbox');
        return { delivered: true, via: 'outbox' };
      } catch (e) {
        opts.log.warn({ to, subject: m.subject, code: (e as { code?: string }).code }, 'writing mail to the outbox failed');
        return { delivered: false, via: 'outbox' };
      }
    },
    close() {
      smtp?.close();
    },
  };
}
