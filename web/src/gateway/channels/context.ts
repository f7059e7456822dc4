// What the rows of the channel table share with the page: visible columns, selection, the session's test
// results, and the actions (each reports with the channel's name).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ColumnKey } from './columns';

export type ChannelDialog = { kind: 'form'; id: number | null } | { kind: 'reveal'; id: number; name: string } | { kind: 'keys'; id: number; name: string } | { kind: 'tag'; tag: string } | null;
export type Act = (f: () => Promise<unknown>) => Promise<unknown>;

/** A test run from this page: what the upstream said, kept until the next test of the channel. */
export interface TestOutcome {
  ok: boolean;
  ms?: number;
  model?: string;
  message?: string;
  code?: string | null;
  upstreamStatus?: number | null;
  at: number;
}

export interface ChannelsContext {
  columns: ColumnKey[];
  selected: Set<number>;
  select: (ids: number[], on: boolean) => void;
  tests: Map<number, TestOutcome>;
  /** Channels with a test or balance query running. */
  pending: Set<number>;
  act: Act;
  open: (d: ChannelDialog) => void;
  test: (c: any) => void;
  balance: (c: any) => void;
  copy: (c: any) => void;
  toggle: (c: any) => void;
  remove: (c: any) => void;
  /** A row's channel changed in place (inline edits): the page keeps the new values. */
  patch: (id: number, values: Record<string, unknown>) => void;
}

export const Channels = createContext<ChannelsContext | null>(null);
export const useChannels = () => useContext(Channels)!;
