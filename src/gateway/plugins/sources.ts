import path from 'node:path';
import { AppError } from '../../kit/http/errors.js';

export interface MarketplaceSource {
  name: string;
  index_url: string;
}

export const MAX_SOURCES = 16;

function invalid(detail: string): never {
  throw new AppError('TASK_PLUGIN_SOURCES_INVALID', { params: { detail } });
}

/** An absolute http(s) URL without credentials, or an absolute, normalised folder path. */
function validLocation(v: string): boolean {
  if (v.startsWith('/')) return !v.includes('\0') && path.posix.normalize(v) === v && !v.split('/').includes('..');
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname && !u.username && !u.password;
  } catch {
    return false;
  }
}

/**
 * G76: trims each name and index_url; names are required and unique, index_url is an absolute http(s)
 * URL (credentials in it are refused, so none is ever stored) or an absolute folder path; at most 16.
 */
export function checkSources(input: MarketplaceSource[]): MarketplaceSource[] {
  if (input.length > MAX_SOURCES) invalid(`at most ${MAX_SOURCES} sources`);
  const names = new Set<string>();
  return input.map((s, i) => {
    const name = s.name.trim();
    const indexUrl = s.index_url.trim();
    if (!name) invalid(`source ${i + 1}: name is required`);
    if (names.has(name.toLowerCase())) invalid(`source ${i + 1}: the name ${name} is used twice`);
    names.add(name.toLowerCase());
    if (!validLocation(indexUrl)) invalid(`source ${i + 1}: index_url must be an absolute http(s) URL without credentials, or an absolute folder path`);
    return { name, index_url: indexUrl };
  });
}
