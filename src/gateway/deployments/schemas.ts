import { Type } from '@sinclair/typebox';

/**
 * What the deployment operations (G41–G59, io.net) answer in `data`, with the reference's read keys
 * (views.ts), and the catalog codes they throw. Documentation and the OpenAPI check only.
 */

const Str = Type.String();
const Int = Type.Integer();
const Num = Type.Number();
const Bool = Type.Boolean();
/** A provider object passed on as it came (locations, container configuration). */
const Passed = Type.Object({}, { additionalProperties: true });

/** One row of a deployment list (views.ts deploymentItem). */
export const DeploymentItem = Type.Object(
  {
    id: Str,
    deployment_name: Str,
    container_name: Str,
    status: Str,
    type: Str,
    time_remaining: Str,
    time_remaining_minutes: Num,
    hardware_info: Str,
    hardware_name: Str,
    brand_name: Str,
    hardware_quantity: Num,
    completed_percent: Num,
    compute_minutes_served: Num,
    compute_minutes_remaining: Num,
    created_at: Int,
    updated_at: Int,
    instance_count: Num,
    resource_config: Type.Object({ cpu: Str, memory: Str, gpu: Num }),
  },
  { $id: 'DeploymentItem' },
);

/** G41 / G56: one page, with counts by status. */
export const DeploymentPage = Type.Object({ items: Type.Array(DeploymentItem), page: Int, page_size: Int, total: Int, status_counts: Type.Record(Type.String(), Int) });

/** G44 / G48: one deployment (views.ts deploymentDetail). */
export const DeploymentDetail = Type.Object(
  {
    id: Str,
    deployment_name: Str,
    description: Str,
    status: Str,
    model_name: Str,
    model_version: Str,
    brand_name: Str,
    hardware_id: Num,
    hardware_name: Str,
    gpu: Str,
    gpus_per_container: Num,
    total_gpus: Num,
    total_containers: Num,
    instance_count: Num,
    cpu: Str,
    memory: Str,
    locations: Type.Array(Type.Unknown()),
    container_config: Passed,
    resource_config: Type.Object({ gpu: Num, gpus_per_container: Num }),
    amount_paid: Num,
    completed_percent: Num,
    compute_minutes_served: Num,
    compute_minutes_remaining: Num,
    created_at: Int,
    updated_at: Int,
  },
  { $id: 'DeploymentDetail' },
);

/** G46 / G47: one container (views.ts containerView). */
export const Container = Type.Object(
  {
    container_id: Str,
    deployment_id: Str,
    device_id: Str,
    brand_name: Str,
    hardware: Str,
    gpus_per_container: Num,
    status: Str,
    created_at: Int,
    uptime_percent: Num,
    public_url: Str,
    events: Type.Array(Type.Object({ time: Int, message: Str })),
  },
  { $id: 'DeploymentContainer' },
);

/** G42 / G43: what the provider said about the request. */
export const DeploymentRequested = Type.Object({ deployment_id: Str, status: Str, message: Str });

/** G53 (and the counts G57–G59 report). */
export const HardwareTypes = Type.Object({
  hardware_types: Type.Array(Type.Object({ id: Int, name: Str, brand_name: Str, max_gpus: Num, available: Bool, available_count: Num })),
  total: Int,
  total_available: Num,
});

/** G57: the provider settings, and whether it answers now (never an error for the provider's sake). */
export const DeploymentSettings = Type.Object({
  provider: Str,
  enabled: Bool,
  configured: Bool,
  can_connect: Bool,
  hardware_count: Int,
  total_available: Num,
  error_code: Type.Optional(Str),
});

export const answers = {
  G41: DeploymentPage,
  G56: DeploymentPage,
  G44: DeploymentDetail,
  G42: DeploymentRequested,
  G45: Type.Object({ deployment_id: Str, status: Str }),
  G43: DeploymentRequested,
  G48: DeploymentDetail,
  G50: Type.Object({ id: Str, name: Str, status: Str, message: Str }),
  G46: Type.Object({ containers: Type.Array(Container), total: Int }),
  G47: Container,
  G49: Type.Object({ container_id: Str, logs: Type.Array(Type.Object({ message: Str })) }),
  G51: Type.Object({
    replicas: Type.Array(Type.Object({ location_id: Int, location_name: Str, iso2: Str, hardware_id: Int, available_count: Num, max_gpus: Int })),
  }),
  G52: Type.Object({ available: Bool, name: Str }),
  G53: HardwareTypes,
  G54: Type.Object({ locations: Type.Array(Type.Object({ iso2: Str }, { additionalProperties: true })), total: Num }),
  G55: Type.Object({
    estimated_cost: Num,
    currency: Str,
    estimation_valid: Bool,
    price_breakdown: Type.Object({ compute_cost: Num, total_cost: Num, hourly_rate: Num }),
  }),
  G57: DeploymentSettings,
  G58: Type.Object({ hardware_count: Int, total_available: Num }),
  G59: Type.Object({ hardware_count: Int, total_available: Num }),
};

/** Catalog codes the deployment operations throw (the provider's refusals and failures among them). */
export const deploymentErrors = [
  'DEPLOYMENT_INVALID',
  'DEPLOYMENT_NAME_TAKEN',
  'DEPLOYMENT_NOT_ENABLED',
  'DEPLOYMENT_NOT_FOUND',
  'DEPLOYMENT_PROVIDER_KEY_REJECTED',
  'DEPLOYMENT_PROVIDER_REJECTED',
  'GATEWAY_SEALING_KEY_CHANGED',
  'UPSTREAM_ADDRESS_REFUSED',
  'UPSTREAM_URL_INVALID',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_BODY_TOO_LARGE',
  'UPSTREAM_UNREACHABLE',
  'UPSTREAM_BAD_STATUS',
  'UPSTREAM_BAD_RESPONSE',
];
