import type { RelayFormat } from '../../../contract/relay.js';
import { anthropic } from './anthropic/index.js';
import { chat } from './chat/index.js';
import { completions } from './completions/index.js';
import { embeddings } from './embeddings/index.js';
import { gemini } from './gemini/index.js';
import { moderations } from './moderations/index.js';
import { rerank } from './rerank/index.js';
import { images } from './images/index.js';
import { responses } from './responses/index.js';
import { speech } from './speech/index.js';
import { transcriptions } from './transcriptions/index.js';
import type { CallerFormat } from './types.js';

/** Every caller format the relay serves, by name. */
export const FORMATS: Readonly<Record<RelayFormat, CallerFormat>> = { chat, responses, embeddings, anthropic, gemini, completions, moderations, rerank, images, speech, transcriptions };

export function formatOf(name: RelayFormat): CallerFormat {
  return FORMATS[name];
}

/** The format whose error shape a relay path (without its query) takes: OpenAI's, the chat format's, unless another claims it. */
export function formatOfRelayPath(path: string): CallerFormat {
  return Object.values(FORMATS).find((f) => f.relayPath.test(path)) ?? chat;
}
