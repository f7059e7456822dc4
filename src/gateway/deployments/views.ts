/** io.net answers mapped to the reference's read keys (SPEC "Deployment read keys", "Container read keys"). */
type Obj = Record<string, unknown>;

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const time = (v: unknown) => {
  const t = typeof v === 'string' ? Date.parse(v) : typeof v === 'number' ? v * 1000 : NaN;
  return Number.isFinite(t) ? Math.floor(t / 1000) : 0;
};

/** One row of G41/G56. */
export function deploymentItem(d: Obj) {
  const qty = num(d.hardware_quantity);
  return {
    id: str(d.id),
    deployment_name: str(d.name),
    container_name: str(d.name),
    status: str(d.status).toLowerCase(),
    type: 'Container',
    time_remaining: str(d.remaining),
    time_remaining_minutes: num(d.compute_minutes_remaining),
    hardware_info: `${str(d.brand_name)} ${str(d.hardware_name)} x${qty}`.trim(),
    hardware_name: str(d.hardware_name),
    brand_name: str(d.brand_name),
    hardware_quantity: qty,
    completed_percent: num(d.completed_percent),
    compute_minutes_served: num(d.compute_minutes_served),
    compute_minutes_remaining: num(d.compute_minutes_remaining),
    created_at: time(d.created_at),
    updated_at: time(d.updated_at ?? d.created_at),
    instance_count: qty,
    resource_config: { cpu: '', memory: '', gpu: qty },
  };
}

/** G44 / G48: the detail of one deployment. */
export function deploymentDetail(d: Obj) {
  const cc = (d.container_config ?? {}) as Obj;
  return {
    id: str(d.id),
    deployment_name: str(d.name ?? d.deployment_name),
    description: str(d.description),
    status: str(d.status).toLowerCase(),
    model_name: str(cc.image_url),
    model_version: '',
    brand_name: str(d.brand_name),
    hardware_id: num(d.hardware_id),
    hardware_name: str(d.hardware_name),
    gpu: str(d.hardware_name),
    gpus_per_container: num(d.gpus_per_container),
    total_gpus: num(d.total_gpus),
    total_containers: num(d.total_containers),
    instance_count: num(d.total_containers),
    cpu: '',
    memory: '',
    locations: Array.isArray(d.locations) ? d.locations : [],
    container_config: cc,
    resource_config: { gpu: num(d.total_gpus), gpus_per_container: num(d.gpus_per_container) },
    amount_paid: num(d.amount_paid),
    completed_percent: num(d.completed_percent),
    compute_minutes_served: num(d.compute_minutes_served),
    compute_minutes_remaining: num(d.compute_minutes_remaining),
    created_at: time(d.created_at),
    updated_at: time(d.finished_at ?? d.started_at ?? d.created_at),
  };
}

/** G46 / G47: one container. */
export function containerView(deploymentId: string, c: Obj) {
  const events = Array.isArray(c.container_events) ? (c.container_events as Obj[]) : [];
  return {
    container_id: str(c.container_id),
    deployment_id: deploymentId,
    device_id: str(c.device_id),
    brand_name: str(c.brand_name),
    hardware: str(c.hardware),
    gpus_per_container: num(c.gpus_per_container),
    status: str(c.status).toLowerCase(),
    created_at: time(c.created_at),
    uptime_percent: num(c.uptime_percent),
    public_url: str(c.public_url),
    events: events.map((e) => ({ time: time(e.time), message: str(e.message) })),
  };
}
