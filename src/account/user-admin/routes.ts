import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { identityOf } from '../auth.js';
import { userIdSchema } from '../users/routes.js';
import { moduleErrors } from '../schemas.js';
import { MAX_PAGE_SIZE, type UserAdminService } from './service.js';
import type { UserChanges } from './changes.js';
import { EDGE_WRITE_ERRORS } from '../customers/edge.js';
import { baseUrlOf } from '../email/routes.js';

const Int = Type.Integer();

/** One user in the admin list: what the reference's user list shows that is kept here, plus the factors. */
const AdminUser = Type.Object(
  {
    id: Int,
    username: Type.String(),
    display_name: Type.String(),
    email: Type.String(),
    role: Int,
    status: Int,
    group: Type.String(),
    created_at: Type.Integer({ description: 'unix seconds' }),
    last_login_at: Type.Integer({ description: 'unix seconds of the newest stored sign-in; 0 when none is stored' }),
    twofa_enabled: Type.Boolean(),
    passkey_count: Int,
    quota: Type.Integer({ description: 'available wallet units on the edge (0 when the edge is not reachable)' }),
    used_quota: Int,
    request_count: Int,
  },
  { additionalProperties: false },
);

const UserPage = Type.Object({ page: Int, page_size: Int, total: Int, items: Type.Array(AdminUser) }, { additionalProperties: false });

/** new-api's paging (`p` from 1, `page_size` up to 100). */
const paging = {
  p: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE })),
};

/** The reference's SearchUsers filters: a keyword (id, username, email, display name), group, role, status. */
const search = {
  ...paging,
  keyword: Type.Optional(Type.String({ maxLength: 100 })),
  group: Type.Optional(Type.String({ maxLength: 64 })),
  role: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  status: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
};

const MANAGE_ERRORS = [...moduleErrors.admin, ...EDGE_WRITE_ERRORS, 'USER_MANAGE_SELF', 'USER_ROOT_PROTECTED', 'USER_PROMOTE_ROOT_ONLY', 'USER_ALREADY_ADMIN', 'USER_ALREADY_COMMON'];
const CHANGE_ERRORS = [...moduleErrors.admin, 'USER_MANAGE_SELF', 'USER_INPUT_INVALID'];
const params = Type.Object({ id: userIdSchema });

/** The admin user list and management (AS05–AS08, additions with new-api's paths and field names). */
export function userAdminRoutes(userAdmin: UserAdminService, changes: UserChanges) {
  return [
    implement('AS05', {
      data: UserPage,
      schema: { querystring: Type.Object(paging) },
      handler: async (req) => ok(await userAdmin.list(req.query)),
    }),

    implement('AS06', {
      data: UserPage,
      schema: { querystring: Type.Object(search) },
      handler: async (req) => ok(await userAdmin.list(req.query)),
    }),

    implement('AS07', {
      data: AdminUser,
      errors: moduleErrors.admin,
      schema: { params: Type.Object({ id: userIdSchema }) },
      handler: async (req) => ok(await userAdmin.get(identityOf(req), req.params.id)),
    }),

    implement('AS08', {
      data: Type.Object({ id: Int, role: Int, status: Int }, { additionalProperties: false }),
      errors: MANAGE_ERRORS,
      schema: {
        body: Type.Object({
          id: userIdSchema,
          action: Type.Union([Type.Literal('disable'), Type.Literal('enable'), Type.Literal('promote'), Type.Literal('demote'), Type.Literal('delete')]),
        }),
      },
      handler: async (req) => ok(await userAdmin.manage(identityOf(req), req.body.id, req.body.action)),
    }),

    implement('AS18', {
      data: Type.Object({ id: Int, username: Type.String(), display_name: Type.String(), role: Int }, { additionalProperties: false }),
      errors: ['USER_CREATE_ROLE', 'USER_INPUT_INVALID', 'USERNAME_TAKEN'],
      schema: {
        body: Type.Object({
          username: Type.Optional(Type.String({ maxLength: 200 })),
          password: Type.Optional(Type.String({ maxLength: 1024 })),
          display_name: Type.Optional(Type.String({ maxLength: 200 })),
          role: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
        }),
      },
      handler: async (req) => ok(await changes.create(identityOf(req), req.body)),
    }),

    implement('AS19', {
      data: Type.Object({ id: Int, password: Type.String({ description: 'the new password, shown in this answer only' }) }, { additionalProperties: false }),
      errors: CHANGE_ERRORS,
      rateLimit: ['critical'],
      schema: { params },
      handler: async (req) => ok(await changes.resetPassword(identityOf(req), req.params.id)),
    }),

    implement('AS21', {
      data: Type.Object(
        {
          id: Int,
          link: Type.String({ description: 'the single-use reset link, shown in this answer only' }),
          expires_at: Type.Integer({ description: 'unix seconds' }),
        },
        { additionalProperties: false },
      ),
      errors: CHANGE_ERRORS,
      rateLimit: ['critical'],
      schema: { params },
      handler: async (req) => ok(await changes.resetLink(identityOf(req), req.params.id, baseUrlOf(req))),
    }),

    implement('AS20', {
      data: Type.Object({ id: Int, group: Type.String() }, { additionalProperties: false }),
      errors: CHANGE_ERRORS,
      schema: { params, body: Type.Object({ group: Type.Optional(Type.String({ maxLength: 200 })) }) },
      handler: async (req) => ok(await changes.setGroup(identityOf(req), req.params.id, req.body.group)),
    }),
  ];
}
