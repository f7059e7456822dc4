// The ratio configuration as the table edits it: one row per model with its four prices as typed text,
// one row per group, and the maps the table does not show (kept as they are).

export type RatioMaps = Record<string, Record<string, number | string>>;
export const COLUMNS = ['model_ratio', 'completion_ratio', 'cache_ratio', 'model_price'] as const;
export type Column = (typeof COLUMNS)[number];
export type ModelRow = { model: string } & Record<Column, string>;
export type GroupRow = { group: string; ratio: string };

/** The maps the table shows none of, when they hold anything. */
export function otherFields(config: RatioMaps): string[] {
  return Object.keys(config).filter((f) => !(COLUMNS as readonly string[]).includes(f) && f !== 'group_ratio' && Object.keys(config[f] ?? {}).length > 0);
}

export function rowsOf(config: RatioMaps): { models: ModelRow[]; groups: GroupRow[] } {
  const names = [...new Set(COLUMNS.flatMap((c) => Object.keys(config[c] ?? {})))].sort();
  const cell = (c: Column, m: string) => (config[c]?.[m] === undefined ? '' : String(config[c]![m]));
  const models = names.map((model) => ({ model, model_ratio: cell('model_ratio', model), completion_ratio: cell('completion_ratio', model), cache_ratio: cell('cache_ratio', model), model_price: cell('model_price', model) }));
  const groups = Object.entries(config.group_ratio ?? {}).map(([group, r]) => ({ group, ratio: String(r) }));
  return { models, groups };
}

/** A cell that is not a number: the row and column, for the message. */
export class CellError extends Error {
  constructor(
    readonly field: string,
    readonly model: string,
  ) {
    super(`${field} ${model}`);
  }
}

function number(text: string, field: string, model: string): number {
  const n = Number(text.trim());
  if (!Number.isFinite(n)) throw new CellError(field, model);
  return n;
}

/** The whole configuration from the table: empty cells are left out; the other maps as loaded. */
export function configOf(base: RatioMaps, models: ModelRow[], groups: GroupRow[]): RatioMaps {
  const out: RatioMaps = {};
  for (const f of Object.keys(base)) if (!(COLUMNS as readonly string[]).includes(f) && f !== 'group_ratio') out[f] = base[f]!;
  for (const c of COLUMNS) out[c] = {};
  for (const r of models) for (const c of COLUMNS) if (r[c].trim() !== '') out[c]![r.model] = number(r[c], c, r.model);
  out.group_ratio = {};
  for (const g of groups) if (g.ratio.trim() !== '') out.group_ratio[g.group] = number(g.ratio, 'group_ratio', g.group);
  return out;
}
