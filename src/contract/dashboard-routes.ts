import { placeholderOperation } from './coverage.js';
import type { RegisteredOperation } from './registry.js';
import type { AuthClass, HttpMethod } from './types.js';

/**
 * Routes new-api's own dashboard (its web/ pages) calls on the account service that are outside SPEC and
 * not served here: payments, task logs, subscriptions, affiliate credit, check-in, content pages (its
 * customer API — tokens, usage, top-up codes, prices — is served: AP01–AS17 in operations.ts).
 * They answer 501 `api_not_implemented` after the reference's authentication (a clear "not here" instead
 * of a bare 404) and are listed in the manifest with state `placeholder` (docs/differences.md, "The
 * reference dashboard").
 */
const routes: { id: string; name: string; method: HttpMethod; path: string; auth: AuthClass; summary: string; code?: string }[] = [
  { id: 'AP14', name: 'midjourneySelf', method: 'GET', path: '/api/mj/self', auth: 'customer', summary: 'Own Midjourney tasks (dashboard, not in this product)' },
  { id: 'AP15', name: 'taskSelf', method: 'GET', path: '/api/task/self', auth: 'customer', summary: 'Own tasks (dashboard, not in this product)' },
  { id: 'AP19', name: 'pay', method: 'POST', path: '/api/user/pay', auth: 'customer', summary: 'Pay by epay (dashboard, not in this product)' },
  { id: 'AP21', name: 'stripePay', method: 'POST', path: '/api/user/stripe/pay', auth: 'customer', summary: 'Pay by Stripe (dashboard, not in this product)' },
  { id: 'AP23', name: 'creemPay', method: 'POST', path: '/api/user/creem/pay', auth: 'customer', summary: 'Pay by Creem (dashboard, not in this product)' },
  { id: 'AP25', name: 'affTransfer', method: 'POST', path: '/api/user/aff_transfer', auth: 'customer', summary: 'Move affiliate credit to quota (dashboard, not in this product)' },
  { id: 'AP26', name: 'setting', method: 'PUT', path: '/api/user/setting', auth: 'customer', summary: 'Own notification settings (dashboard, not in this product)' },
  { id: 'AP27', name: 'accessToken', method: 'GET', path: '/api/user/token', auth: 'customer', summary: 'Generate a personal access token (dashboard; here: npm run cli -- user token)' },
  { id: 'AP28', name: 'selfDelete', method: 'DELETE', path: '/api/user/self', auth: 'customer', summary: 'Delete the own account (dashboard, not in this product)' },
  { id: 'AP31', name: 'checkinStatus', method: 'GET', path: '/api/user/checkin', auth: 'customer', summary: 'Check-in status (dashboard, not in this product)' },
  { id: 'AP32', name: 'checkin', method: 'POST', path: '/api/user/checkin', auth: 'customer', summary: 'Daily check-in (dashboard, not in this product)' },
  { id: 'AP35', name: 'subscriptionPreference', method: 'PUT', path: '/api/subscription/self/preference', auth: 'customer', summary: 'Own subscription preference (dashboard, not in this product)' },
  { id: 'AP36', name: 'subscriptionEpayPay', method: 'POST', path: '/api/subscription/epay/pay', auth: 'customer', summary: 'Buy a subscription by epay (dashboard, not in this product)' },
  { id: 'AP37', name: 'subscriptionStripePay', method: 'POST', path: '/api/subscription/stripe/pay', auth: 'customer', summary: 'Buy a subscription by Stripe (dashboard, not in this product)' },
  { id: 'AP38', name: 'subscriptionCreemPay', method: 'POST', path: '/api/subscription/creem/pay', auth: 'customer', summary: 'Buy a subscription by Creem (dashboard, not in this product)' },
  { id: 'AP39', name: 'logoutGet', method: 'GET', path: '/api/user/logout', auth: 'none', summary: 'The reference\'s cookie-session logout (here: POST /api/user/auth/logout, A23)' },
  { id: 'AP40', name: 'groups', method: 'GET', path: '/api/user/groups', auth: 'none', summary: 'Public group list (dashboard, not in this product)' },
  // Also GET /api/models/ of new-api's admin Models page (one route here): models are the gateway console's.
  { id: 'AP41', name: 'models', method: 'GET', path: '/api/models', auth: 'customer', summary: 'Models of the dashboard (in the gateway console here)', code: 'GATEWAY_CONSOLE_ONLY' },
  { id: 'AP48', name: 'oauthStateGet', method: 'GET', path: '/api/oauth/state', auth: 'optional', summary: 'The reference\'s OAuth state by GET (here: POST /api/oauth/state, A05, which also builds the authorization URL)' },
];

/** The dashboard routes outside SPEC as operations of the account service, state `placeholder`. */
export function dashboardPlaceholderOperations(): RegisteredOperation[] {
  return routes.map(({ code, ...r }) => placeholderOperation({ ...r, deployable: 'account' }, code));
}
