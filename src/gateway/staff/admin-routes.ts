import { implement, NoData, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { securityProofOf, staffOf } from '../auth.js';
import type { StaffAdminService } from './admin-service.js';
import {
  AuditPage,
  AuditQuery,
  StaffCreateBody,
  StaffEntry,
  StaffIdParams,
  StaffIssuedToken,
  StaffListData,
  StaffPermissionBody,
  StaffRevokedData,
  StaffStatusBody,
  StaffStatusData,
  StaffToken,
  StaffTokenIssueBody,
  StaffTotpData,
  TokenIdParams,
} from './admin-schemas.js';
import { Type } from '@sinclair/typebox';

const NOT_FOUND = ['STAFF_NOT_FOUND'];
/** What a step-up before a secret may answer (GS11, GS14). */
const STEP_UP = ['STAFF_STEP_UP_NOT_ENROLLED', 'GW_PROOF_REQUIRED', 'GW_PROOF_INVALID', 'GATEWAY_SEALING_KEY_CHANGED'];

/** GS06–GS15: staff, tokens, TOTP and the audit log for root, from the console. */
export function staffAdminRoutes(admin: StaffAdminService): OperationImpl<any>[] {
  return [
    implement('GS06', { data: StaffListData, handler: async (req) => ok(await admin.list(staffOf(req))) }),
    implement('GS07', {
      data: StaffEntry,
      errors: ['STAFF_INVALID', 'STAFF_NAME_TAKEN', 'STAFF_ROOT_HAS_ALL'],
      schema: { body: StaffCreateBody },
      handler: async (req) => ok(await admin.create(staffOf(req), req.body)),
    }),
    implement('GS08', {
      data: StaffStatusData,
      errors: [...NOT_FOUND, 'STAFF_SELF_DISABLE'],
      schema: { params: StaffIdParams, body: StaffStatusBody },
      handler: async (req) => {
        await admin.setDisabled(staffOf(req), req.params.id, req.body.disabled);
        return ok({ id: req.params.id, disabled: req.body.disabled });
      },
    }),
    implement('GS09', {
      data: NoData,
      errors: [...NOT_FOUND, 'STAFF_INVALID', 'STAFF_ROOT_HAS_ALL', 'STAFF_SELF_PERMISSION'],
      schema: { params: StaffIdParams, body: StaffPermissionBody },
      handler: async (req) => {
        await admin.setPermission(staffOf(req), req.params.id, req.body.permission, req.body.effect);
        return ok();
      },
    }),
    implement('GS10', {
      data: Type.Array(StaffToken),
      errors: NOT_FOUND,
      schema: { params: StaffIdParams },
      handler: async (req) => ok(await admin.tokens(req.params.id)),
    }),
    implement('GS11', {
      data: StaffIssuedToken,
      errors: [...NOT_FOUND, 'STAFF_DISABLED', ...STEP_UP],
      schema: { params: StaffIdParams, body: StaffTokenIssueBody },
      bodyMayBeAbsent: true,
      noStore: true,
      handler: async (req) => ok(await admin.issueToken(staffOf(req), req.params.id, req.body.ttl_seconds, securityProofOf(req))),
    }),
    implement('GS12', {
      data: NoData,
      errors: ['STAFF_TOKEN_NOT_FOUND', 'STAFF_SELF_LAST_TOKEN'],
      schema: { params: TokenIdParams },
      handler: async (req) => {
        await admin.revokeToken(staffOf(req), req.params.token_id);
        return ok();
      },
    }),
    implement('GS13', {
      data: StaffRevokedData,
      errors: [...NOT_FOUND, 'STAFF_SELF_LAST_TOKEN'],
      schema: { params: StaffIdParams },
      handler: async (req) => ok(await admin.revokeAll(staffOf(req), req.params.id)),
    }),
    implement('GS14', {
      data: StaffTotpData,
      errors: [...NOT_FOUND, 'STAFF_DISABLED', 'STAFF_SERVICE_NO_TOTP', ...STEP_UP],
      schema: { params: StaffIdParams },
      bodyMayBeAbsent: true,
      noStore: true,
      handler: async (req) => ok(await admin.enrollTotp(staffOf(req), req.params.id, securityProofOf(req))),
    }),
    implement('GS15', {
      data: AuditPage,
      schema: { querystring: AuditQuery },
      handler: async (req) => {
        const q = req.query;
        const filter = { operation: q.action?.trim() || undefined, actor: q.actor?.trim() || undefined, channelId: q.channel_id, from: q.start_time, to: q.end_time };
        return ok(await admin.audit(filter, q.p ?? 1, q.page_size ?? 20));
      },
    }),
  ];
}
