import { deriveKey, hmac, randomToken } from '../../kit/crypto/tokens.js';
import { nowSeconds } from '../db.js';
import type { AccountContext } from '../context.js';
import { flowsStore } from './store.js';

/** Flow purposes. A flow presented for another purpose is rejected. */
export type FlowPurpose =
  | 'oauth'
  | 'login_verification'
  | 'login_passkey'
  | 'passkey_login'
  | 'passkey_register'
  | 'passkey_step_up'
  | 'telegram_bind'
  | 'telegram_assertion'
  | '2fa_setup'
  | 'security_proof'
  | 'email_binding';

export interface Flow<P = Record<string, unknown>> {
  purpose: FlowPurpose;
  userId: number | null;
  sessionId: string | null;
  provider: string | null;
  intent: string | null;
  payload: P;
  attempts: number;
  createdAt: number;
  expiresAt: number;
}

/** A flow named by its stored hash instead of its token (FlowsService.refOf, latestOfSession). */
export type FlowRef = string & { readonly __flowRef: unique symbol };

export interface CreateFlow<P> {
  purpose: FlowPurpose;
  ttlSeconds: number;
  userId?: number | null;
  sessionId?: string | null;
  provider?: string | null;
  intent?: string | null;
  payload?: P;
}

/**
 * Short-lived, purpose-bound, single-use flows. The client gets a random 256-bit token; the database
 * keeps only its HMAC, so a database leak does not hand out live flows.
 */
export function createFlowsService(ctx: AccountContext) {
  const { db } = ctx.database;
  const key = deriveKey(ctx.secret, 'auth-flow');
  const hashOf = (token: string) => hmac(key, token);

  function toFlow<P>(row: Awaited<ReturnType<typeof flowsStore.byHash>>): Flow<P> | null {
    if (!row) return null;
    return {
      purpose: row.purpose as FlowPurpose,
      userId: row.user_id === null ? null : Number(row.user_id),
      sessionId: row.session_id,
      provider: row.provider,
      intent: row.intent,
      payload: JSON.parse(row.payload) as P,
      attempts: row.attempts,
      createdAt: Number(row.created_at),
      expiresAt: Number(row.expires_at),
    };
  }

  /** A flow's reference (the HMAC of its token, as stored); null for a token that cannot be one. */
  function refOf(token: string | undefined): FlowRef | null {
    return !token || token.length > 128 ? null : (hashOf(token) as FlowRef);
  }

  async function peekRef<P>(ref: FlowRef | null, purpose: FlowPurpose): Promise<Flow<P> | null> {
    if (!ref) return null;
    const row = await flowsStore.byHash(db, ref);
    if (!row || row.purpose !== purpose || row.consumed_at !== null || Number(row.expires_at) <= nowSeconds()) return null;
    return toFlow<P>(row);
  }

  async function consumeRef<P>(ref: FlowRef | null, purpose: FlowPurpose): Promise<Flow<P> | null> {
    if (!ref) return null;
    const row = await flowsStore.byHash(db, ref);
    if (!row || row.purpose !== purpose) return null;
    if (!(await flowsStore.consume(db, ref, purpose, nowSeconds()))) return null;
    return toFlow<P>(row);
  }

  return {
    async create<P extends object>(input: CreateFlow<P>): Promise<{ token: string; expiresAt: number }> {
      const token = randomToken(32);
      const now = nowSeconds();
      const expiresAt = now + input.ttlSeconds;
      await flowsStore.insert(db, {
        token_hash: hashOf(token),
        purpose: input.purpose,
        user_id: input.userId ?? null,
        session_id: input.sessionId ?? null,
        provider: input.provider ?? null,
        intent: input.intent ?? null,
        payload: JSON.stringify(input.payload ?? {}),
        attempts: 0,
        created_at: now,
        expires_at: expiresAt,
        consumed_at: null,
      });
      return { token, expiresAt };
    },

    /** The live flow for this token and purpose, without consuming it; null if unknown, used, expired or another purpose. */
    async peek<P = Record<string, unknown>>(token: string | undefined, purpose: FlowPurpose): Promise<Flow<P> | null> {
      return peekRef<P>(refOf(token), purpose);
    },

    /** Consumes the flow atomically: of concurrent callers exactly one gets it; null for everyone else. */
    async consume<P = Record<string, unknown>>(token: string | undefined, purpose: FlowPurpose): Promise<Flow<P> | null> {
      return consumeRef<P>(refOf(token), purpose);
    },

    /** Counts a failed attempt on the flow; returns the new count. */
    addAttempt(token: string): Promise<number> {
      return flowsStore.addAttempt(db, hashOf(token));
    },

    refOf,
    peekRef,
    consumeRef,
    addAttemptRef: (ref: FlowRef) => flowsStore.addAttempt(db, ref),

    /** Ends the live flows of `purpose` that this session began (a new one replaces them). */
    endLiveOfSession(purpose: FlowPurpose, userId: number, sessionId: string) {
      return flowsStore.endLive(db, purpose, userId, sessionId, nowSeconds());
    },

    /**
     * The newest live flow of `purpose` that this session began, as a reference used in place of its token
     * (for a client that does not send the token back; the flow stays bound to the session).
     */
    async latestOfSession(purpose: FlowPurpose, userId: number, sessionId: string): Promise<FlowRef | null> {
      const hash = await flowsStore.latestLive(db, purpose, userId, sessionId, nowSeconds());
      return (hash ?? null) as FlowRef | null;
    },

    updatePayload(token: string, payload: object) {
      return flowsStore.updatePayload(db, hashOf(token), JSON.stringify(payload));
    },

    /** Deletes flows expired for more than a day. */
    purge() {
      return flowsStore.purge(db, nowSeconds() - 86400);
    },
  };
}

export type FlowsService = ReturnType<typeof createFlowsService>;
