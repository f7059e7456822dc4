import { Type, type Static, type TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { AppError } from '../../kit/http/errors.js';
import { staffOf } from '../auth.js';
import type { UpstreamUpdateService } from './updates.js';
import { ApplyAllResult, ApplyResult, DetectResult, JobStarted, gatewayErrors } from '../schemas.js';

const Id = Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 });
const Names = Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 20_000 }), Type.Null()]));
/** G37's body; G39 takes the same type (SPEC) and reads only `id`. */
const Selection = Type.Object({ id: Id, add_models: Names, remove_models: Names, ignore_models: Names });

const ApplyAllBody = Type.Object({ after_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 53 - 1 })) });
const DetectAllBody = Type.Object({ force: Type.Optional(Type.Boolean()) });

/**
 * A body that may be left out (the dashboard posts G38 and G40 without one): a route schema would refuse
 * the missing body, so it is checked here.
 */
function optionalBody<T extends TObject>(schema: T, body: unknown): Static<T> {
  if (body === undefined || body === null) return {} as Static<T>;
  if (!Value.Check(schema, body)) {
    const first = Value.Errors(schema, body).First();
    throw new AppError('INVALID_PARAMETERS', { params: { detail: first ? `body${first.path.replaceAll('/', '.')} ${first.message}` : 'body' } });
  }
  return body;
}

/** Upstream model updates (G37–G40). */
export function upstreamUpdateRoutes(updates: UpstreamUpdateService): OperationImpl<any>[] {
  return [
    implement('G37', {
      data: ApplyResult,
      errors: gatewayErrors.updates,
      schema: { body: Selection },
      handler: async (req) => {
        const b = req.body;
        return ok(await updates.apply(staffOf(req), b.id, { add_models: b.add_models ?? [], remove_models: b.remove_models ?? [], ignore_models: b.ignore_models ?? [] }));
      },
    }),
    implement('G38', {
      data: ApplyAllResult,
      errors: gatewayErrors.updates,
      handler: async (req) => ok(await updates.applyAll(staffOf(req), optionalBody(ApplyAllBody, req.body).after_id ?? 0)),
    }),
    implement('G39', {
      data: DetectResult,
      errors: gatewayErrors.updates,
      schema: { body: Selection },
      handler: async (req) => ok(await updates.detect(staffOf(req), req.body.id)),
    }),
    implement('G40', {
      data: JobStarted,
      errors: gatewayErrors.updates,
      handler: async (req) => ok(await updates.detectAll(staffOf(req), optionalBody(DetectAllBody, req.body).force ?? false)),
    }),
  ];
}
