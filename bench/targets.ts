/**
 * Ratio targets of `npm run bench` (issue 15): each compares two cases measured in alternating slices of
 * the same run, prints the ratio of every round, their mean and a MET/MISSED verdict on the mean.
 */
import { mean, type Figures } from './lib.js';

export interface Target {
  name: string;
  /** The ratio of one round, from that round's figures. */
  ratio: (round: Figures[]) => number | undefined;
  goal: number;
  /** 'min': the ratio must reach the goal; 'max': it must not exceed it (a cost). */
  kind: 'min' | 'max';
  rounds: Figures[][];
}

export interface Verdict {
  name: string;
  ratios: number[];
  mean: number;
  goal: string;
  met: boolean;
  /** Mean host steal over every slice of the comparison. */
  steal?: number;
}

export function judge(t: Target): Verdict {
  const ratios = t.rounds.map(t.ratio).filter((r): r is number => r !== undefined && Number.isFinite(r));
  const m = ratios.length ? mean(ratios) : NaN;
  const steals = t.rounds.flat().map((f) => f.steal);
  return {
    name: t.name,
    ratios,
    mean: m,
    goal: `${t.kind === 'min' ? '≥' : '≤'} ${t.goal}`,
    met: t.kind === 'min' ? m >= t.goal : m <= t.goal,
    steal: steals.every((s) => s !== undefined) ? mean(steals as number[]) : undefined,
  };
}

/** Ratio of req/s of two slices of a round. */
export const rateRatio = (a: number, b: number) => (round: Figures[]) => round[a]!.rps / round[b]!.rps;
/** Ratio of server CPU per request (all threads) of two slices of a round. */
export const cpuRatio = (a: number, b: number) => (round: Figures[]) => {
  const [x, y] = [round[a]!.cpu, round[b]!.cpu];
  return x && y ? x.all / y.all : undefined;
};

const digits = (n: number) => (n >= 10 ? n.toFixed(1) : n.toFixed(3));

export function verdictLines(verdicts: Verdict[]): string[] {
  const width = Math.max(...verdicts.map((v) => v.name.length));
  return [
    `${'target'.padEnd(width)}  ${'mean'.padStart(7)}  ${'goal'.padEnd(7)}  verdict  per round`,
    ...verdicts.map(
      (v) =>
        `${v.name.padEnd(width)}  ${digits(v.mean).padStart(7)}  ${v.goal.padEnd(7)}  ${(v.met ? 'MET' : 'MISSED').padEnd(7)}  ` +
        `${v.ratios.map(digits).join(' ')}${v.steal === undefined ? '' : `  (host steal ${(v.steal * 100).toFixed(0)} %)`}`,
    ),
  ];
}

/**
 * A Markdown table (header and one row) for docs/performance.md ("Issue 15", the relay's and the edge's issue 33
 * figures): when (UTC), the load average,
 * then per target its mean ratio, verdict and [host steal].
 */
export function docsTable(verdicts: Verdict[], loadAverage: number[]): string[] {
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const cells = verdicts.map((v) => `${digits(v.mean)} ${v.met ? 'MET' : 'MISSED'}${v.steal === undefined ? '' : ` [${(v.steal * 100).toFixed(0)} %]`}`);
  return [
    `| run (UTC) | load avg (1/5/15 min) | ${verdicts.map((v) => `${v.name} (${v.goal})`).join(' | ')} |`,
    `|---|---|${verdicts.map(() => '---:|').join('')}`,
    `| ${when} | ${loadAverage.map((l) => l.toFixed(2)).join(' ')} | ${cells.join(' | ')} |`,
  ];
}
