import { customerSuite } from './suite.js';

// Account, gateway and edge in one process (SERVICES=account,gateway,edge): the account reaches the edge in process.
customerSuite('co-hosted');
