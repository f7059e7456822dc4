import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import { AffinitySettings, AffinitySettingsBody, DeploymentSettingsState, RatioConfig, RatioConfigBody, settingsErrors } from './schemas.js';
import type { SettingsService } from './service.js';

/** Settings that were CLI-only (root): ratio configuration (GS16, GS17), io.net (GS18), channel affinity (GS19, GS20). */
export function settingsRoutes(settings: SettingsService): OperationImpl<any>[] {
  return [
    implement('GS16', { data: RatioConfig, handler: async () => ok(await settings.ratioConfig()) }),
    implement('GS17', {
      data: RatioConfig,
      errors: settingsErrors.ratio,
      schema: { body: RatioConfigBody },
      handler: async (req) => ok((await settings.setRatioConfig(staffOf(req), req.body)).config),
    }),
    implement('GS18', {
      data: DeploymentSettingsState,
      errors: settingsErrors.deployment,
      noStore: true,
      schema: { body: Type.Object({ enabled: Type.Optional(Type.Boolean()), api_key: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: false }) },
      handler: async (req) => ok(await settings.setDeploymentSettings(staffOf(req), req.body)),
    }),
    implement('GS19', { data: AffinitySettings, handler: async () => ok(await settings.affinitySettings()) }),
    implement('GS20', {
      data: AffinitySettings,
      errors: settingsErrors.affinity,
      schema: { body: AffinitySettingsBody },
      handler: async (req) => ok(await settings.setAffinitySettings(staffOf(req), req.body)),
    }),
  ];
}
