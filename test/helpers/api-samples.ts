import fs from 'node:fs';
import path from 'node:path';

/**
 * Answers seen by the shared test clients, kept for the OpenAPI check (test/openapi-answers.test.ts).
 * With API_SAMPLES=<directory> every JSON answer is appended as one line {method, path, status, body}
 * to <directory>/<pid>.jsonl; without it nothing is written.
 */
export interface ApiSample {
  method: string;
  /** Path and query, as requested. */
  path: string;
  status: number;
  body: unknown;
}

const dir = process.env.API_SAMPLES;
/** Larger answers (long listings) are left out: the many smaller ones cover the same schemas. */
const MAX_TEXT = 256 * 1024;

export function recordSample(method: string, url: string, status: number, text: string, json: unknown) {
  if (!dir || json === undefined || text.length > MAX_TEXT) return;
  const u = new URL(url);
  const line: ApiSample = { method: method.toUpperCase(), path: u.pathname + u.search, status, body: json };
  fs.appendFileSync(path.join(dir, `${process.pid}.jsonl`), JSON.stringify(line) + '\n');
}

/** Every sample recorded under `directory`. */
export function readSamples(directory: string): ApiSample[] {
  if (!fs.existsSync(directory)) return [];
  return fs
    .readdirSync(directory)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => fs.readFileSync(path.join(directory, f), 'utf8').split('\n').filter(Boolean))
    .map((l) => JSON.parse(l) as ApiSample);
}
