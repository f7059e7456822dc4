import type { Command } from 'commander';
import type { Config } from '../config/index.js';
import type { Runtime } from '../runtime.js';

/** Gateway commands (staff, tokens, services, key rotation, audit). */
export function registerGatewayCommands(_program: Command, _boot: () => { config: Config; runtime: Runtime }) {}
