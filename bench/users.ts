/** The users bench/server.ts creates for the account cases. */
export const READER = 'bench-reader';
export const REFRESHER = 'bench-refresher';
/** Login users: spread over many accounts so no user piles up thousands of sessions during the run. */
export const LOGIN_USERS = Array.from({ length: 64 }, (_, i) => `bench-login-${i}`);
export const BENCH_USERS = [READER, REFRESHER, ...LOGIN_USERS];
/** The bearer the floor server of bench/server.ts accepts (it checks nothing else). */
export const FLOOR_TOKEN = 'floor-token';
