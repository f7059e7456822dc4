import type { OperationImpl } from '../contract/types.js';
import { loginRoutes } from './login/routes.js';
import { sessionRoutes } from './sessions/routes.js';
import { userRoutes } from './users/routes.js';
import { twoFactorRoutes } from './two-factor/routes.js';
import { verificationRoutes } from './verification/routes.js';
import { passkeyRoutes } from './passkeys/routes.js';
import { emailOAuthRoutes } from './oauth/all-routes.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { userAdminRoutes } from './user-admin/routes.js';

/** Every implemented account operation; the registry marks the rest planned. */
export const accountRoutes: OperationImpl<any>[] = [...loginRoutes, ...sessionRoutes, ...userRoutes, ...twoFactorRoutes, ...verificationRoutes, ...passkeyRoutes, ...emailOAuthRoutes, ...dashboardRoutes, ...userAdminRoutes];
