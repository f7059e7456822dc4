type Obj = Record<string, unknown>;

/** G42's body as validated by its schema (src/gateway/deployments/routes.ts). */
export interface CreateDeployment {
  resource_private_name: string;
  duration_hours: number;
  gpus_per_container: number;
  hardware_id: number;
  location_ids: number[];
  container_config: { replica_count: number } & Obj;
  registry_config: { image_url: string } & Obj;
}

const CONTAINER_FIELDS = ['replica_count', 'env_variables', 'secret_env_variables', 'entrypoint', 'args', 'traffic_port'] as const;
const REGISTRY_FIELDS = ['image_url', 'registry_username', 'registry_secret'] as const;

/** The named fields of `source` that are present; anything else is left out. */
function pick(source: Obj, fields: readonly string[]): Obj {
  const out: Obj = {};
  for (const f of fields) if (source[f] !== undefined) out[f] = source[f];
  return out;
}

/** The request io.net's /deploy receives: only G42's known fields, unknown ones (at any level) left out. */
export function deployRequest(body: CreateDeployment): Obj {
  return {
    resource_private_name: body.resource_private_name,
    duration_hours: body.duration_hours,
    gpus_per_container: body.gpus_per_container,
    hardware_id: body.hardware_id,
    location_ids: body.location_ids,
    container_config: pick(body.container_config, CONTAINER_FIELDS),
    registry_config: pick(body.registry_config, REGISTRY_FIELDS),
  };
}
