import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { accountOf } from '../context.js';
import { identityOf } from '../auth.js';
import { usersStore } from '../users/store.js';

/**
 * What new-api's pages read of features this product does not have (online payment, subscriptions,
 * affiliate credit, site content, uptime monitors, model performance metrics, fine-grained permissions), answered as the reference
 * answers while such a feature is not configured, so its pages open without an error (docs/differences.md,
 * "The reference dashboard"). Nothing here is stored or configurable.
 */

/** new-api's GetTopUpInfo with every payment off; redemption of top-up codes is on (AP18 serves it). */
const TOPUP_INFO = {
  enable_online_topup: false,
  enable_stripe_topup: false,
  enable_creem_topup: false,
  enable_waffo_topup: false,
  enable_waffo_pancake_topup: false,
  enable_redemption: true,
  payment_compliance_confirmed: false,
  payment_compliance_terms_version: '',
  waffo_pay_methods: null,
  creem_products: [],
  pay_methods: [],
  min_topup: 1,
  stripe_min_topup: 1,
  waffo_min_topup: 1,
  waffo_pancake_min_topup: 1,
  amount_options: [],
  discount: {},
  topup_link: '',
};

const Str = Type.String();
const Empty = Type.Array(Type.Unknown(), { maxItems: 0 });

export function unconfiguredRoutes() {
  const content = (id: string) =>
    implement(id, {
      data: Str,
      handler: async () => ok(''),
    });
  return [
    implement('AP16', {
      data: Type.Object({ enable_online_topup: Type.Boolean(), enable_stripe_topup: Type.Boolean(), enable_redemption: Type.Boolean(), pay_methods: Empty }, { additionalProperties: true }),
      handler: async () => ok(TOPUP_INFO),
    }),

    // The Wallet page asks the price of an amount as it is typed, ignoring a business refusal (HTTP 200).
    ...(['AP20', 'AP22'] as const).map((id) =>
      implement(id, {
        data: Str,
        errors: ['ONLINE_TOPUP_UNAVAILABLE'],
        schema: { body: Type.Optional(Type.Object({ amount: Type.Optional(Type.Number()) })) },
        bodyMayBeAbsent: true,
        handler: async () => {
          throw new AppError('ONLINE_TOPUP_UNAVAILABLE');
        },
      }),
    ),

    implement('AS53', {
      data: Type.Object({ groups: Empty, max_count: Type.Integer() }),
      handler: async () => ok({ groups: [], max_count: 0 }),
    }),

    implement('AP24', {
      data: Str,
      handler: async (req) => {
        const user = await usersStore.byId(accountOf(req).database.db, identityOf(req).userId);
        if (!user) throw new AppError('AUTH_SESSION_REVOKED');
        return ok(user.aff_code);
      },
    }),

    implement('AP33', { data: Empty, handler: async () => ok([]) }),

    implement('AP34', {
      data: Type.Object({ billing_preference: Str, subscriptions: Empty, all_subscriptions: Empty }),
      handler: async () => ok({ billing_preference: 'wallet_only', subscriptions: [], all_subscriptions: [] }),
    }),

    content('AP43'),
    content('AP44'),
    content('AP45'),
    content('AP46'),
    content('AP47'),

    implement('AS50', { data: Empty, handler: async () => ok([]) }),

    implement('AS51', {
      data: Type.Array(Str),
      handler: async (req) => {
        const groups = await usersStore.groups(accountOf(req).database.db);
        return ok([...new Set(['default', ...groups])]);
      },
    }),

    // The Pricing page's and the overview's model performance (the reference's perf-metrics, not kept here).
    implement('AS54', {
      data: Type.Object({ models: Empty }),
      schema: { querystring: Type.Object({ hours: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })) }) },
      handler: async () => ok({ models: [] }),
    }),

    implement('AS55', {
      data: Type.Object({ model_name: Str, groups: Empty }),
      schema: { querystring: Type.Object({ model: Type.String({ minLength: 1, maxLength: 256 }), hours: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })) }) },
      handler: async (req) => ok({ model_name: req.query.model, groups: [] }),
    }),

    implement('AS52', {
      data: Type.Object({ resources: Empty, roles: Empty }),
      handler: async () => ok({ resources: [], roles: [] }),
    }),
  ];
}
