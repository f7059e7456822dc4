import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import type { JobService } from './service.js';
import { Job, gatewayErrors } from '../schemas.js';

/** GS02: a background job's state and progress, from any instance. */
export function jobRoutes(jobs: JobService): OperationImpl<any>[] {
  return [
    implement('GS02', {
      data: Job,
      errors: gatewayErrors.jobs,
      schema: { params: Type.Object({ task_id: Type.String({ minLength: 1, maxLength: 40, pattern: '^[0-9a-fA-F-]+$' }) }) },
      handler: async (req) => ok(await jobs.get(req.params.task_id)),
    }),
  ];
}
