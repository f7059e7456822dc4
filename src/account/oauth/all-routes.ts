import { emailBindingRoutes, emailCodeRoutes } from '../email/routes.js';
import { resetRoutes } from '../reset/routes.js';
import { bindingRoutes } from '../bindings/routes.js';
import { oauthRoutes } from './routes.js';
import { socialRoutes } from './social-routes.js';

/** Every implemented operation of email, reset, OAuth and bindings. */
export const emailOAuthRoutes = [...emailCodeRoutes, ...emailBindingRoutes, ...resetRoutes, ...oauthRoutes, ...bindingRoutes, ...socialRoutes];
