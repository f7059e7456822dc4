import { useState } from 'preact/hooks';
import { Area, ErrorBox, Field, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';

const EMPTY = { image_url: '', traffic_port: '', command: '', env: '' };

/** `KEY=value` lines into an object; a line without `=` is an error the form shows. */
function parseEnv(text: string) {
  const env: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf('=');
    if (at < 1) throw new Error(t('dep_env_bad', { line }));
    env[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return env;
}

/** G45: changes the image, port, command or environment of a running deployment; only filled fields are sent. */
export function UpdateDeployment({ id, current, onDone }: { id: string; current: any; onDone: (message: string) => void }) {
  const [f, setF] = useState(EMPTY);
  const { busy, error, setError, run } = useAction();
  const set = (k: keyof typeof EMPTY) => (e: any) => setF({ ...f, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    let env: Record<string, string>;
    try {
      env = parseEnv(f.env);
    } catch (err) {
      return setError(err);
    }
    const body: Record<string, unknown> = {};
    if (f.image_url.trim()) body.image_url = f.image_url.trim();
    if (f.traffic_port.trim()) body.traffic_port = Number(f.traffic_port);
    if (f.command.trim()) body.command = f.command.trim();
    if (Object.keys(env).length) body.env_variables = env;
    if (!Object.keys(body).length) return setError(new Error(t('dep_update_empty')));
    run(async () => {
      const r = await api.call('G45', { params: { id }, body });
      setF(EMPTY);
      onDone(t('dep_updated', { fields: Object.keys(body).join(', '), status: r.status || '—' }));
    });
  };
  return (
    <form onSubmit={submit} aria-label={t('dep_update')}>
      <h3>{t('dep_update')}</h3>
      <div class="row">
        <Field label={t('dep_image')} placeholder={current.model_name} value={f.image_url} onInput={set('image_url')} />
        <Field label={t('dep_port')} type="number" min={1} max={65535} value={f.traffic_port} onInput={set('traffic_port')} />
      </div>
      <Field label={t('dep_command')} value={f.command} onInput={set('command')} />
      <Area label={t('dep_env')} placeholder="KEY=value" value={f.env} onInput={set('env')} />
      <ErrorBox error={error} />
      <button type="submit" disabled={busy}>
        {t('dep_update')}
      </button>
    </form>
  );
}
