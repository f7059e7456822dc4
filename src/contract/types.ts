import { Type, type TSchema, type Static } from '@sinclair/typebox';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LaneRequest } from '../kit/http/fast-lane.js';

export type Deployable = 'account' | 'gateway' | 'edge';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/**
 * SPEC's authentication classes. none: nothing mounted; optional: a customer identity may be present;
 * customer: customer login identity; browser: customer identity of a browser session (has a sid);
 * admin: staff (role >= admin on the account side, a staff or service identity on the gateway);
 * root: root administrator; developer: an edge developer credential (svc_sk_…, SPEC's archived public API);
 * workload: a short-lived workload token of another deployable (the gateway relay's and the edge customer port's
 * internal APIs), on loopback only.
 */
export type AuthClass = 'none' | 'optional' | 'customer' | 'browser' | 'admin' | 'root' | 'developer' | 'workload';

/** implemented: built and tested; planned: registered, answers 501 NOT_IMPLEMENTED. */
export type OperationState = 'implemented' | 'planned' | 'disabled' | 'placeholder';

/** One SPEC operation as the product declares it: identity, route and access rule. */
export interface OperationSpec {
  id: string;
  /**
   * Short camelCase name: the OpenAPI operationId is `<id>_<name>` (A25_login). Published names stay as
   * they are (generated clients use them); routes of task plugins have none (src/contract/openapi.ts).
   */
  name?: string;
  method: HttpMethod;
  path: string;
  deployable: Deployable;
  auth: AuthClass;
  /** Gateway permission name (authz.*). */
  permission?: string;
  /**
   * Gateway admin operations SPEC gives no permission: the authz.* permission a staff identity must also
   * hold, so a denial holds (default here, GATEWAY_OPERATION_PERMISSIONS overrides; docs/differences.md).
   * Not SPEC's `permission`: a service identity stays refused whatever it was granted.
   */
  operatorPermission?: string;
  /** Security verification scope (SPEC name, e.g. TwoFASetup). */
  scope?: string;
  /** Needs a sensitive-operation verification (G10). */
  verification?: boolean;
  /** Cookie endpoint behind the origin guard (A23, A24). */
  originGuard?: boolean;
  summary: string;
  /** Set for operations this product adds beyond SPEC (recorded in docs/differences.md). */
  addition?: boolean;
  /**
   * Set for operations of SPEC's "Archived design: machine-facing public API" (ids E01…): not rows of the
   * A/G tables, served by the edge deployable.
   */
  archived?: boolean;
  /** Set for routes a task plugin registers (id `plugin:<key>:<n>`). */
  plugin?: { key: string; version: string };
}

export interface RouteSchemas {
  body?: TSchema;
  querystring?: TSchema;
  params?: TSchema;
}

type S<T> = T extends TSchema ? Static<T> : unknown;

export type OperationRequest<R extends RouteSchemas> = FastifyRequest<{
  Body: S<R['body']>;
  Querystring: S<R['querystring']>;
  Params: S<R['params']>;
}>;

/** The implementation of one operation: schemas, limits and a thin handler. */
export interface OperationImpl<R extends RouteSchemas = RouteSchemas> {
  id: string;
  schema?: R;
  /** Rate-limit buckets of the deployable that apply, in order. */
  rateLimit?: string[];
  bodyLimit?: number;
  /**
   * Takes a multipart/form-data body (a file upload) instead of JSON: its text fields become the body's
   * fields, its files UploadedFile values (kit/http/multipart.ts), validated with the body schema.
   */
  multipart?: boolean;
  /** Adds Cache-Control: no-store (auth responses). */
  noStore?: boolean;
  metering?: string;
  cancellable?: boolean;
  /** Runs after authentication, before the request is parsed and validated (a task plugin's enabled check). */
  gate?: (req: FastifyRequest) => Promise<void>;
  /**
   * A request with no body at all is validated and handled as `{}` (clients that POST without a body, as
   * new-api's dashboard does for A35 and A37). Without it an absent body fails a body schema with 400.
   */
  bodyMayBeAbsent?: boolean;
  /**
   * The `data` of the success envelope {success, message, data} (200), or `NoData` when the answer has
   * none. Documentation and the OpenAPI check only: never handed to Fastify (its serializer would drop
   * the fields a schema does not list).
   */
  data?: TSchema;
  /** Success answers other than the envelope (OpenAI-shaped bodies, streams, redirects), by status. */
  answers?: Record<number, AnswerDoc>;
  /** Catalog codes this operation throws itself, besides those of its auth class and the kit's (openapi.ts). */
  errors?: readonly string[];
  handler: (req: OperationRequest<R>, reply: FastifyReply) => Promise<unknown>;
  /**
   * The same operation served on the listener's fast lane (kit/http/fast-lane.ts), outside Fastify's request
   * cycle: for a hot JSON POST with no rate limit, gate, guard, alias or multipart body. It answers on `res`
   * itself; `handler` still serves the Fastify route (app.inject, a disabled lane).
   */
  lane?: (req: LaneRequest, res: ServerResponse) => Promise<void>;
}

/** The `data` of an envelope that carries none (`ok()` without data). */
export const NoData: TSchema = Type.Unsafe({ description: 'no data' });

/** One success answer that is not the envelope. */
export interface AnswerDoc {
  description: string;
  /** The JSON body; absent: no JSON (a redirect, an empty answer). */
  schema?: TSchema;
  /** Also answered as server-sent events (`stream: true` in the request). */
  stream?: boolean;
  /** Also (or only) answered as these media types, the bytes as the upstream sent them (audio, subtitles). */
  media?: string[];
}

export function implement<R extends RouteSchemas>(id: string, impl: Omit<OperationImpl<R>, 'id'>): OperationImpl<R> {
  return { id, ...impl } as OperationImpl<R>;
}
