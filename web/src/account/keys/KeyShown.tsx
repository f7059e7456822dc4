// A key just created: shown this once (the edge keeps only its hash), with a copy button and snippets for
// the OpenAI SDK, curl and, when the edge serves Anthropic's API, Claude Code.
import { useState } from 'preact/hooks';
import { CopyButton, Dialog } from '../../shared/ui';
import { edgeUrl } from '../format';
import { t } from '../texts';
import { snippets } from './snippets';

export function KeyShown(props: { name: string; secret: string; model: string; onClose: () => void }) {
  const list = snippets(props.secret, props.model);
  const [tab, setTab] = useState(list[0]!.id);
  const shown = list.find((s) => s.id === tab) ?? list[0]!;
  const copy = { label: t('copy'), copied: t('copied'), failed: t('copy_failed') };
  return (
    <Dialog title={t('key_created_title', { name: props.name })} onClose={props.onClose} wide>
      <div class="notice" role="status">
        {t('key_shown_once')}
      </div>
      <div class="row key-line">
        <code class="mono" data-testid="new-key">
          {props.secret}
        </code>
        <CopyButton text={props.secret} {...copy} />
      </div>
      <p class="muted small">
        {t('key_base_url')} <code>{`${edgeUrl}/v1`}</code>
      </p>
      <div class="segmented" role="group" aria-label={t('key_snippets')}>
        {list.map((s) => (
          <button type="button" class="secondary" aria-pressed={s.id === tab} onClick={() => setTab(s.id)}>
            {s.label}
          </button>
        ))}
      </div>
      <pre class="snippet" data-snippet={shown.id}>
        <code>{shown.code}</code>
      </pre>
      <div class="row">
        <CopyButton text={shown.code} label={t('copy_snippet')} copied={t('copied')} failed={t('copy_failed')} />
        <button type="button" onClick={props.onClose}>
          {t('key_saved_close')}
        </button>
      </div>
    </Dialog>
  );
}
