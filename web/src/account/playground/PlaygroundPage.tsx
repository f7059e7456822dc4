// The playground: a chat with a model the user may call (AP29), streamed through the account service's
// /pg/chat/completions (AP49) with the signed-in session and billed to the user's wallet like any call; no key.
import { useEffect, useRef, useState } from 'preact/hooks';
import { Area, ErrorBox, Select, useAction } from '../../shared/ui';
import { ApiError } from '../../shared/api';
import { api } from '../session';
import { count } from '../format';
import { t } from '../texts';
import { ChatError, streamChat, type ChatMessage, type ChatUsage } from './chat';

export function PlaygroundPage() {
  const [models, setModels] = useState<string[] | null>(null);
  const [model, setModel] = useState('');
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [draft, setDraft] = useState('');
  const [streaming, setStreaming] = useState<string | null>(null);
  const [usage, setUsage] = useState<ChatUsage | null>(null);
  const abort = useRef<AbortController | null>(null);
  const chat = useAction();
  useEffect(() => {
    void api.call('AP29').then(
      (m) => (setModels(m), setModel(m[0] ?? '')),
      () => setModels([]),
    );
    return () => abort.current?.abort();
  }, []);
  const send = (e: Event) => {
    e.preventDefault();
    const text = draft.trim();
    if (!text || !model) return;
    const history: ChatMessage[] = [...messages, { role: 'user', content: text }];
    setMessages(history);
    setDraft('');
    setUsage(null);
    setStreaming('');
    const controller = new AbortController();
    abort.current = controller;
    let answer = '';
    void chat
      .run(async () => {
        try {
          const u = await streamChat({ model, messages: history, signal: controller.signal, onText: (piece) => setStreaming((answer += piece)) });
          setUsage(u);
        } catch (err) {
          if ((err as Error).name === 'AbortError') return;
          if (err instanceof ChatError) throw new ApiError(err.message, err.code, err.status);
          throw new Error(t('pg_unreachable'));
        }
      })
      .finally(() => {
        if (answer) setMessages([...history, { role: 'assistant', content: answer }]);
        setStreaming(null);
        abort.current = null;
      });
  };
  const busy = streaming !== null;
  return (
    <section class="card" aria-labelledby="pg-title">
      <h2 id="pg-title">{t('playground')}</h2>
      <p class="muted">{t('pg_intro')}</p>
      {models && models.length === 0 ? (
        <p class="muted">{t('no_models')}</p>
      ) : (
        <Select label={t('u_model')} name="model" value={model} onChange={(e) => setModel(e.currentTarget.value)} options={(models ?? []).map((m) => [m, m])} />
      )}
      <ol class="chat" aria-live="polite" aria-label={t('pg_conversation')}>
        {messages.map((m) => (
          <li class={`msg ${m.role}`} data-role={m.role}>
            <span class="who">{m.role === 'user' ? t('pg_you') : t('pg_model')}</span>
            <div class="text">{m.content}</div>
          </li>
        ))}
        {streaming !== null && (
          <li class="msg assistant" data-role="assistant" aria-busy="true">
            <span class="who">{t('pg_model')}</span>
            <div class="text">{streaming || '…'}</div>
          </li>
        )}
      </ol>
      {usage && (
        <p class="muted small" data-testid="pg-usage">
          {t('pg_usage', { input: count(usage.prompt_tokens), output: count(usage.completion_tokens) })}
        </p>
      )}
      <ErrorBox error={chat.error} />
      <form onSubmit={send}>
        <Area label={t('pg_message')} name="message" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        <div class="row">
          <button type="submit" disabled={busy || !model || !draft.trim()}>
            {t('pg_send')}
          </button>
          {busy && (
            <button type="button" class="secondary" onClick={() => abort.current?.abort()}>
              {t('pg_stop')}
            </button>
          )}
          <button type="button" class="secondary" disabled={busy || messages.length === 0} onClick={() => (setMessages([]), setUsage(null))}>
            {t('pg_clear')}
          </button>
        </div>
      </form>
    </section>
  );
}
