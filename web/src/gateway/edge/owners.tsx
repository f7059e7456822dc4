import { useEffect, useId, useState } from 'preact/hooks';
import { Field, type useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { OWNER_PATTERN } from './format';

/**
 * The owners the edge knows: every owner with a key, a wallet or a webhook endpoint (GS25, GS28, GS31), by
 * name; read again whenever `refresh` changes (the panel's rows after a write).
 */
export function useEdgeOwners(refresh?: unknown): string[] {
  const [owners, setOwners] = useState<string[]>([]);
  useEffect(() => {
    void Promise.all([api.call('GS25', { query: {} }), api.call('GS28'), api.call('GS31')])
      .then(([keys, wallets, hooks]) => setOwners([...new Set([...keys, ...wallets, ...hooks].map((r) => r.owner))].sort()))
      // The list only offers names; without it the field still takes one.
      .catch(() => undefined);
  }, [refresh]);
  return owners;
}

/** An owner's name, offering the known owners as suggestions (a name not among them is a new owner). */
export function OwnerField(props: { owners: string[]; label?: string; hint?: string; name: string; value: string; onInput: (value: string) => void; required?: boolean; readOnly?: boolean }) {
  const list = useId();
  return (
    <>
      <Field
        label={props.label ?? t('edge_owner')}
        hint={props.hint}
        name={props.name}
        list={list}
        autocomplete="off"
        required={props.required}
        readOnly={props.readOnly}
        maxLength={64}
        pattern={OWNER_PATTERN}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      <datalist id={list} data-testid="edge-owner-options">
        {props.owners.map((o) => (
          <option value={o} />
        ))}
      </datalist>
    </>
  );
}

/** True when `owner` is known, or when the user agrees to create it (a write for a new name creates the owner). */
export function ownerConfirmed(confirm: ReturnType<typeof useConfirm>, owners: string[], owner: string): Promise<boolean> {
  if (owners.includes(owner)) return Promise.resolve(true);
  return confirm.ask({ title: t('edge_new_owner_title', { owner }), message: t('edge_new_owner_confirm', { owner }), confirm: t('edge_new_owner_create'), cancel: t('edge_cancel') });
}
