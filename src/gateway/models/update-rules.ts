import { RE2JS } from 're2js';
import { jsonObject } from '../../kit/json/object.js';

/** The upstream-update fields of a channel's `settings` JSON (the reference's names). */
export const FIELD = {
  check: 'upstream_model_update_check_enabled',
  autoSync: 'upstream_model_update_auto_sync_enabled',
  lastCheck: 'upstream_model_update_last_check_time',
  detected: 'upstream_model_update_last_detected_models',
  removed: 'upstream_model_update_last_removed_models',
  ignored: 'upstream_model_update_ignored_models',
} as const;

/** A model name a channel's comma-separated `models` can hold (validate.ts checks the same 255). */
const MAX_NAME = 255;
/** Longest `regex:` pattern compiled; longer ones never match. */
const MAX_PATTERN = 512;
/**
 * The largest settings text written by detection: G03's request schema takes at most 65,536 characters of
 * `settings`, so a channel edited and saved back by the dashboard must still fit.
 */
export const SETTINGS_MAX = 60_000;

export interface UpdateSettings {
  /** Every field of the stored JSON object, kept as it was. */
  raw: Record<string, unknown>;
  checkEnabled: boolean;
  autoSync: boolean;
  lastCheckTime: number;
  detected: string[];
  removed: string[];
  ignored: string[];
}

/** Trimmed, non-empty, first occurrence kept; names holding a comma (which would split in `models`) dropped. */
export function modelList(values: unknown): string[] {
  if (!Array.isArray(values)) return [];
  const out = new Set<string>();
  for (const v of values) {
    if (typeof v !== 'string') continue;
    const name = v.trim();
    if (name && !name.includes(',')) out.add(name);
  }
  return [...out];
}

/** Upstream ids a channel can list: also at most 255 characters. */
export function usableUpstream(ids: string[]): string[] {
  return modelList(ids).filter((m) => [...m].length <= MAX_NAME);
}

export function modelsOf(text: string): string[] {
  return modelList(text.split(','));
}

export function merge(base: string[], added: string[]): string[] {
  return [...new Set([...base, ...added])];
}

export function subtract(base: string[], removed: string[]): string[] {
  const drop = new Set(removed);
  return base.filter((m) => !drop.has(m));
}

export function intersect(base: string[], allowed: string[]): string[] {
  const keep = new Set(allowed);
  return base.filter((m) => keep.has(m));
}

export function readSettings(text: string | null | undefined): UpdateSettings {
  const raw = jsonObject(text);
  const time = Number(raw[FIELD.lastCheck]);
  const ignored = Array.isArray(raw[FIELD.ignored]) ? (raw[FIELD.ignored] as unknown[]) : [];
  return {
    raw,
    checkEnabled: raw[FIELD.check] === true,
    autoSync: raw[FIELD.autoSync] === true,
    lastCheckTime: Number.isFinite(time) && time > 0 ? Math.floor(time) : 0,
    detected: modelList(raw[FIELD.detected]),
    removed: modelList(raw[FIELD.removed]),
    // Ignore entries may be patterns holding commas (`regex:a{1,3}`): only trimmed and de-duplicated.
    ignored: [...new Set(ignored.filter((v): v is string => typeof v === 'string').map((v) => v.trim()).filter(Boolean))],
  };
}

/**
 * The settings text with the update fields written over the stored object. When the pending lists would
 * make it longer than SETTINGS_MAX they are shortened from their ends (the next detection lists the rest).
 */
export function settingsText(s: UpdateSettings): string {
  let detected = s.detected;
  let removed = s.removed;
  const text = () =>
    JSON.stringify({ ...s.raw, [FIELD.lastCheck]: s.lastCheckTime, [FIELD.detected]: detected, [FIELD.removed]: removed, [FIELD.ignored]: s.ignored });
  let out = text();
  while (out.length > SETTINGS_MAX && (detected.length || removed.length)) {
    if (detected.length >= removed.length) detected = detected.slice(0, Math.floor(detected.length * 0.9));
    else removed = removed.slice(0, Math.floor(removed.length * 0.9));
    out = text();
  }
  return out;
}

/**
 * Whether a model is ignored: an exact entry, or a `regex:` entry found in the name (unanchored, as the
 * reference's Go regexp). Patterns run on RE2 (linear time, the reference's syntax, `(?i)` included), so
 * no pattern can stall the gateway; one that does not compile, is empty or longer than MAX_PATTERN ignores nothing.
 */
export function ignoreMatcher(ignored: string[]): (name: string) => boolean {
  const exact = new Set<string>();
  const patterns: RE2JS[] = [];
  for (const entry of ignored) {
    if (!entry.startsWith('regex:')) {
      exact.add(entry);
      continue;
    }
    const body = entry.slice('regex:'.length).trim();
    if (!body || body.length > MAX_PATTERN) continue;
    try {
      patterns.push(RE2JS.compile(body));
    } catch {
      // A pattern that does not compile matches nothing, as in the reference.
    }
  }
  return (name) => exact.has(name) || patterns.some((p) => p.matcher(name).find());
}

/** The channel's model_mapping as trimmed non-empty `source → target` pairs. */
export function mappingOf(text: string | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const [source, target] of Object.entries(jsonObject(text))) {
    if (typeof target !== 'string' || !source.trim() || !target.trim()) continue;
    out.set(source.trim(), target.trim());
  }
  return out;
}

/**
 * What the upstream's list means for the channel. To add: upstream models the channel neither lists nor
 * reaches through a mapping target, and that are not ignored. To remove: listed models the upstream no
 * longer offers, except mapping sources (aliases the channel exposes, absent upstream by design).
 */
export function pendingChanges(local: string[], upstream: string[], ignored: string[], mapping: Map<string, string>) {
  const covered = new Set([...local, ...mapping.values()]);
  const offered = new Set(upstream);
  const isIgnored = ignoreMatcher(ignored);
  return {
    add: upstream.filter((m) => !covered.has(m) && !isIgnored(m)),
    remove: local.filter((m) => !mapping.has(m) && !offered.has(m)),
  };
}

export interface Selection {
  add_models: string[];
  remove_models: string[];
  ignore_models: string[];
}

/**
 * A G37 choice applied to the pending lists: each list is first narrowed to what is pending; a model both
 * added and removed is added; an added model leaves the ignore list, an ignored one joins it.
 */
export function applySelection(models: string[], s: UpdateSettings, pick: Selection) {
  const added = intersect(modelList(pick.add_models), s.detected);
  const ignored = subtract(intersect(modelList(pick.ignore_models), s.detected), added);
  const removed = subtract(intersect(modelList(pick.remove_models), s.removed), added);
  const next: UpdateSettings = {
    ...s,
    ignored: subtract(merge(s.ignored, ignored), added),
    detected: subtract(s.detected, [...added, ...ignored]),
    removed: subtract(s.removed, removed),
  };
  return { models: subtract(merge(models, added), removed), settings: next, added, removed, ignored };
}
