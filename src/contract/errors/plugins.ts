import type { ErrorCatalog } from '../../kit/http/errors.js';

/** Task plugins: administration (G72–G77, G84) and the routes plugins register. */
export const pluginErrors = {
  TASK_PLUGIN_NOT_FOUND: { status: 404, en: 'Task plugin {key} is not installed', zh: '任务插件 {key} 未安装' },
  TASK_PLUGIN_VERSION_NOT_FOUND: { status: 404, en: 'Task plugin {key} has no installed version {version}', zh: '任务插件 {key} 没有已安装的版本 {version}' },
  TASK_PLUGIN_VERSION_FACTORY: {
    status: 409,
    en: 'Version {version} of task plugin {key} is built in (factory layer) and cannot be deleted; disable the plugin instead',
    zh: '任务插件 {key} 的版本 {version} 为内置版本，不能删除；请改为禁用该插件',
  },
  TASK_PLUGIN_IN_USE: {
    status: 409,
    en: 'Task plugin {key} is still in use: {channel_count} bound channel(s) (pass cascade=true to disable them) and {in_flight_count} task(s) in flight (pass force=true)',
    zh: '任务插件 {key} 仍在使用中：绑定渠道 {channel_count} 个（传 cascade=true 一并禁用），进行中任务 {in_flight_count} 个（传 force=true）',
  },
  TASK_PLUGIN_VERSION_IN_USE: {
    status: 409,
    en: 'Version {version} of task plugin {key} is still in use: {channel_count} bound channel(s), {in_flight_count} task(s) in flight (pass force=true)',
    zh: '任务插件 {key} 的版本 {version} 仍在使用中：绑定渠道 {channel_count} 个，进行中任务 {in_flight_count} 个（传 force=true）',
  },
  TASK_PLUGIN_SOURCES_INVALID: { status: 400, en: 'Invalid marketplace sources: {detail}', zh: '插件市场来源无效：{detail}' },
  TASK_PLUGIN_DISABLED: { status: 409, en: 'Task plugin {key} is disabled', zh: '任务插件 {key} 已停用' },
  TASK_PLUGIN_BUDGET_EXCEEDED: {
    status: 429,
    en: 'Too many tasks in flight: {limit} queued or running task(s) per identity at most',
    zh: '进行中的任务过多：每个身份最多 {limit} 个排队或运行中的任务',
  },
  TASK_PLUGIN_TASK_NOT_FOUND: { status: 404, en: 'Task not found', zh: '任务不存在' },
  TASK_PLUGIN_TASK_FINISHED: { status: 409, en: 'The task has already finished ({status}) and cannot be cancelled', zh: '任务已结束（{status}），不能取消' },
  TASK_PLUGIN_REJECTED: { status: 400, en: 'The task plugin refused the request: {detail}', zh: '任务插件拒绝了请求：{detail}' },
  TASK_PLUGIN_FAILED: { status: 502, en: 'Task plugin {key} failed to handle the request', zh: '任务插件 {key} 处理请求失败' },
} satisfies ErrorCatalog;
