import type { Operations } from '../../generated/gateway-api';
import { t } from '../texts';

export type StaffEntry = Operations['GS06']['data']['items'][number];
export type StaffList = Operations['GS06']['data'];

/** The permissions the gateway knows, in the order the console lists them. */
export const PERMISSIONS = ['authz.ChannelRead', 'authz.ChannelWrite', 'authz.ChannelOperate', 'authz.ChannelSensitiveWrite', 'authz.TaskPluginBind'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const permissionName = (p: string) => {
  const text = t(`perm_${p}`);
  return text.startsWith('perm_') ? p : text;
};

export const roleName = (role: string) => t(`sf_role_${role}`);
