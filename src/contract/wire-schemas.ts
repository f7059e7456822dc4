import { Type } from '@sinclair/typebox';

/**
 * The bodies of the OpenAI-compatible answers (the edge's /v1 routes) and of the gateway relay's internal
 * routes, as the upstreams and the converters write them. Permissive: the fields the product reads or
 * writes are named, every object may carry more (upstreams add fields freely). Documentation and the
 * OpenAPI check only.
 */

const open = { additionalProperties: true };
const Str = Type.String();
const Int = Type.Integer();
const Num = Type.Number();
const Any = Type.Object({}, open);

/** OpenAI Chat Completions (not streamed). */
export const ChatCompletion = Type.Object(
  {
    id: Str,
    object: Type.Literal('chat.completion'),
    created: Int,
    model: Str,
    choices: Type.Array(
      Type.Object({ index: Int, message: Type.Object({ role: Str, content: Type.Union([Str, Type.Null()]) }, open), finish_reason: Type.Union([Str, Type.Null()]) }, open),
    ),
    usage: Type.Optional(Type.Object({ prompt_tokens: Int, completion_tokens: Int, total_tokens: Int }, open)),
  },
  { ...open, $id: 'ChatCompletion' },
);

/** An OpenAI Responses object (not streamed). */
export const OpenAIResponse = Type.Object(
  {
    id: Str,
    object: Type.Literal('response'),
    created_at: Int,
    status: Str,
    model: Str,
    output: Type.Array(Type.Object({ type: Str }, open)),
    usage: Type.Optional(Type.Union([Type.Object({ input_tokens: Int, output_tokens: Int, total_tokens: Int }, open), Type.Null()])),
  },
  { ...open, $id: 'OpenAIResponse' },
);

/** OpenAI embeddings. */
export const EmbeddingList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(Type.Object({ object: Str, index: Int, embedding: Type.Union([Type.Array(Num), Str]) }, open)),
    model: Str,
    usage: Type.Optional(Type.Object({ prompt_tokens: Int, total_tokens: Int }, open)),
  },
  { ...open, $id: 'EmbeddingList' },
);

/** An Anthropic Messages answer (not streamed). */
export const AnthropicMessage = Type.Object(
  {
    id: Str,
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    model: Str,
    content: Type.Array(Type.Object({ type: Str }, open)),
    stop_reason: Type.Union([Str, Type.Null()]),
    usage: Type.Object({ input_tokens: Int, output_tokens: Int }, open),
  },
  { ...open, $id: 'AnthropicMessage' },
);

/** A Gemini generateContent answer (not streamed). */
export const GeminiResponse = Type.Object(
  {
    candidates: Type.Array(Type.Object({ content: Type.Optional(Type.Object({ parts: Type.Optional(Type.Array(Any)) }, open)) }, open)),
    usageMetadata: Type.Optional(Any),
  },
  { ...open, $id: 'GeminiResponse' },
);

/** An OpenAI legacy completion (`text_completion`, not streamed). */
export const TextCompletion = Type.Object(
  {
    id: Str,
    object: Type.Literal('text_completion'),
    created: Int,
    model: Str,
    choices: Type.Array(Type.Object({ index: Int, text: Str, finish_reason: Type.Union([Str, Type.Null()]) }, open)),
    usage: Type.Optional(Type.Object({ prompt_tokens: Int, completion_tokens: Int, total_tokens: Int }, open)),
  },
  { ...open, $id: 'TextCompletion' },
);

/** An OpenAI moderation answer. */
export const ModerationResult = Type.Object(
  { id: Str, model: Str, results: Type.Array(Type.Object({ flagged: Type.Boolean() }, open)) },
  { ...open, $id: 'ModerationResult' },
);

/** A rerank answer in Jina's shape (as new-api answers every rerank channel). */
export const RerankResult = Type.Object(
  {
    results: Type.Array(Type.Object({ index: Int, relevance_score: Num, document: Type.Optional(Type.Unknown()) })),
    usage: Type.Object({ prompt_tokens: Int, total_tokens: Int }),
  },
  { $id: 'RerankResult' },
);

/** An OpenAI model object (one of the edge's enabled public models). */
export const Model = Type.Object({ id: Str, object: Type.Literal('model'), created: Int, owned_by: Str }, { $id: 'Model' });

/** The OpenAI model list (the edge's enabled public models). */
export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(Model) }, { $id: 'ModelList' });

/** A model as Anthropic's models API shows it (what Claude Code and the Anthropic SDK read). */
export const AnthropicModel = Type.Object({ type: Type.Literal('model'), id: Str, display_name: Str, created_at: Str }, { $id: 'AnthropicModel' });

/** Anthropic's model list: one page, every model. */
export const AnthropicModelList = Type.Object({ data: Type.Array(AnthropicModel), has_more: Type.Boolean(), first_id: Type.Union([Str, Type.Null()]), last_id: Type.Union([Str, Type.Null()]) }, { $id: 'AnthropicModelList' });

/** Gemini's model list (`name` is `models/{id}`, as Google answers). */
export const GeminiModelList = Type.Object({ models: Type.Array(Type.Object({ name: Str, displayName: Str, supportedGenerationMethods: Type.Array(Str) }, open)) }, { ...open, $id: 'GeminiModelList' });

/** A prompt's token count: Anthropic's count_tokens answer. */
export const AnthropicTokenCount = Type.Object({ input_tokens: Int }, { $id: 'AnthropicTokenCount' });

/** A prompt's token count: Gemini's countTokens answer. */
export const GeminiTokenCount = Type.Object({ totalTokens: Int }, { ...open, $id: 'GeminiTokenCount' });

/** An OpenAI image generation answer: each image as a URL or base64 (b64_json). */
export const ImagesResponse = Type.Object(
  {
    created: Int,
    data: Type.Array(Type.Object({ url: Type.Optional(Str), b64_json: Type.Optional(Str), revised_prompt: Type.Optional(Str) }, open)),
    usage: Type.Optional(Type.Object({ input_tokens: Int, output_tokens: Int, total_tokens: Int }, open)),
  },
  { ...open, $id: 'ImagesResponse' },
);

/** An OpenAI transcription as JSON (response_format json or verbose_json); text, srt and vtt are text. */
export const Transcription = Type.Object({ text: Str, usage: Type.Optional(Any) }, { ...open, $id: 'Transcription' });

/** One relayed call's summary (src/contract/relay.ts RelaySummary): GR04, and the x-relay-summary header. */
export const RelaySummary = Type.Object(
  {
    request_id: Str,
    model: Str,
    upstream_model: Str,
    channel_id: Type.Union([Int, Type.Null()]),
    key_index: Type.Union([Int, Type.Null()]),
    status: Int,
    error_code: Type.Union([Str, Type.Null()]),
    usage: Type.Object({ prompt_tokens: Int, completion_tokens: Int, cached_tokens: Int, reasoning_tokens: Int, total_tokens: Int, counted: Type.Boolean() }),
    quota: Num,
    cost_usd: Num,
    first_byte_ms: Type.Union([Int, Type.Null()]),
    total_ms: Int,
    attempts: Type.Array(Type.Object({ channel_id: Int, key_index: Type.Union([Int, Type.Null()]), status: Int, error_code: Type.Union([Str, Type.Null()]), ms: Int })),
  },
  { $id: 'RelaySummary' },
);
