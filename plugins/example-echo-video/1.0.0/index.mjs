// Example task plugin. Each exported function handles one route of plugin.json. The gateway has already
// authenticated the caller, checked ownership of :task_id and the in-flight budget; `ctx` carries the
// caller's identity, the validated fields and, for task routes, a handle on the caller's own task.

export async function submit(ctx) {
  if (ctx.body.prompt.trim() === '') ctx.reject('prompt must not be blank');
  await ctx.task.running();
  if (!ctx.body.hold) {
    const timer = setTimeout(() => {
      ctx.task.succeed({ video_url: `echo://${ctx.task.task_id}.mp4`, prompt: ctx.body.prompt, model: ctx.body.model });
    }, ctx.body.duration_ms ?? 0);
    timer.unref?.();
    ctx.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  }
  return { model: ctx.body.model };
}

export async function get(ctx) {
  return { progress: ctx.task.status === 'succeeded' ? 100 : 0 };
}

export async function cancel() {
  // Nothing upstream to stop; the gateway marks the task cancelled after this returns.
  return {};
}

export async function models() {
  return ['echo-video-1'];
}
