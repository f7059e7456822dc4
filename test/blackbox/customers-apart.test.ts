import { customerSuite } from './suite.js';

// The account service in its own process; the gateway with the edge in another: the account reaches the edge's
// customer API over HTTP with a workload token (ACCOUNT_EDGE_URL, ACCOUNT_EDGE_TOKEN_KEY, EDGE_CUSTOMER_TOKEN_SECRET).
customerSuite('apart');
