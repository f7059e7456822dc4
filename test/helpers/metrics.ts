import assert from 'node:assert/strict';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  text: string;
  samples: Sample[];
  /** Every series name the scrape can hold, from its TYPE lines (histograms with _bucket, _sum and _count). */
  names: Set<string>;
}

const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

function labelsOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
  return out;
}

/** Parses Prometheus text exposition (the format prom-client writes). */
export function parseScrape(text: string): Scrape {
  const samples: Sample[] = [];
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      for (const suffix of SUFFIXES[type[2]!] ?? ['']) names.add(type[1]! + suffix);
      continue;
    }
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{.*\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    samples.push({ name: m[1]!, labels: labelsOf(m[2] ?? ''), value: Number(m[3]) });
  }
  return { text, samples, names };
}

/** GETs /metrics from a test server (same host: no token needed unless the server has one). */
export async function scrape(baseUrl: string, token?: string): Promise<Scrape> {
  const res = await fetch(`${baseUrl}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return parseScrape(text);
}

/** The samples of `name` whose labels include `labels`. */
export function series(s: Scrape, name: string, labels: Record<string, string> = {}): Sample[] {
  return s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
}

/** The value of the one sample of `name` with `labels` (failing when there is none or several). */
export function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const found = series(s, name, labels);
  assert.equal(found.length, 1, `${name}${JSON.stringify(labels)}: ${found.length} samples\n${s.samples.filter((x) => x.name === name).map((x) => JSON.stringify(x)).join('\n')}`);
  return found[0]!.value;
}
