import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../shared/api';
import { ErrorBox, Notice, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { CreateStaff } from './CreateStaff';
import { PermissionsDialog } from './PermissionsDialog';
import { StaffTable } from './StaffTable';
import { TokensDialog } from './TokensDialog';
import { TotpDialog } from './TotpDialog';
import type { StaffEntry, StaffList } from './format';
import './staff.css';

type Open = { kind: 'create' } | { kind: 'permissions' | 'tokens' | 'totp'; id: number } | null;

/** Root only: a non-root caller gets 403 GW_ROOT_REQUIRED from the API and this message instead of the page. */
export function RootOnly({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.code === 'GW_ROOT_REQUIRED') {
    return (
      <section class="card" data-testid="root-only">
        <p>{t('sf_root_only')}</p>
      </section>
    );
  }
  return <ErrorBox error={error} />;
}

/** Staff and service identities (GS06): create, enable/disable, permissions, tokens, second factor. */
export function StaffPage() {
  const [list, setList] = useState<StaffList | null>(null);
  const [open, setOpen] = useState<Open>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const confirm = useConfirm();
  const load = () =>
    run(async () => {
      setList(await api.call('GS06'));
    });
  useEffect(() => void load(), []);
  const me = list?.items.find((s) => s.id === list.self_id);
  const current = open && open.kind !== 'create' ? list?.items.find((s) => s.id === open.id) : undefined;
  const close = () => {
    setOpen(null);
    void load();
  };
  const toggle = async (s: StaffEntry) => {
    const disabling = !s.disabled;
    const ok = await confirm.ask({
      title: t(disabling ? 'sf_confirm_disable_title' : 'sf_confirm_enable_title', { name: s.name }),
      message: t(disabling ? 'sf_confirm_disable' : 'sf_confirm_enable'),
      confirm: t(disabling ? 'sf_disable' : 'sf_enable'),
      cancel: t('cancel'),
      danger: disabling,
    });
    if (!ok) return;
    await run(async () => {
      setNotice('');
      await api.call('GS08', { params: { id: s.id }, body: { disabled: disabling } });
      setNotice(t(disabling ? 'sf_now_disabled' : 'sf_now_enabled', { name: s.name }));
      setList(await api.call('GS06'));
    });
  };
  if (!list) {
    return (
      <>
        <h2 class="page-title">{t('sf_title')}</h2>
        {busy ? <p class="muted">…</p> : <RootOnly error={error} />}
      </>
    );
  }
  return (
    <>
      <div class="row spread">
        <h2 class="page-title">{t('sf_title')}</h2>
        <div class="row">
          <button type="button" onClick={() => setOpen({ kind: 'create' })}>
            {t('sf_new')}
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => void load()}>
            {t('sf_refresh')}
          </button>
        </div>
      </div>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      <section class="card" aria-label={t('sf_table')}>
        <StaffTable list={list} onOpen={(kind, id) => setOpen({ kind, id })} onToggle={toggle} />
      </section>
      {open?.kind === 'create' && (
        <CreateStaff
          onClose={() => setOpen(null)}
          onCreated={(name) => {
            setNotice(t('sf_created_one', { name }));
            close();
          }}
        />
      )}
      {current && open?.kind === 'permissions' && <PermissionsDialog staff={current} self={current.id === list.self_id} adminDefaults={list.admin_defaults} onClose={close} />}
      {current && open?.kind === 'tokens' && <TokensDialog staff={current} me={me?.name ?? ''} self={current.id === list.self_id} onClose={close} />}
      {current && open?.kind === 'totp' && <TotpDialog staff={current} me={me?.name ?? ''} onClose={close} />}
      {confirm.dialog}
    </>
  );
}
