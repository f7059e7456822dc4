import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { implement } from '../../contract/types.js';
import { AnthropicModel, AnthropicModelList, GeminiModelList, Model, ModelList } from '../../contract/wire-schemas.js';
import { AppError } from '../../kit/http/errors.js';
import { identityOf } from '../auth.js';
import { checkAdmission } from '../calls/answer.js';
import type { EdgeContext } from '../context.js';
import { edgeErrors } from '../schemas.js';
import { listModels, modelOf } from './store.js';

type PublicModel = { public_model_id: string; updated_at: number | bigint | string };

const openaiModel = (m: PublicModel) => ({ id: m.public_model_id, object: 'model' as const, created: Number(m.updated_at), owned_by: 'system' });
const anthropicModel = (m: PublicModel) => ({ type: 'model' as const, id: m.public_model_id, display_name: m.public_model_id, created_at: new Date(Number(m.updated_at) * 1000).toISOString() });
const geminiModel = (m: PublicModel) => ({ name: `models/${m.public_model_id}`, displayName: m.public_model_id, supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'] });

/**
 * The list in the shape its client reads: Anthropic's clients send anthropic-version (with x-api-key, or, as its
 * SDK does now, a bearer; new-api asks for both headers), Google's their key header or ?key=.
 */
function listShapeOf(req: FastifyRequest): 'openai' | 'anthropic' | 'gemini' {
  const has = (name: string) => typeof req.headers[name] === 'string' && req.headers[name] !== '';
  if (has('anthropic-version')) return 'anthropic';
  if (has('x-goog-api-key') || typeof (req.query as { key?: unknown } | undefined)?.key === 'string') return 'gemini';
  return 'openai';
}

/** The enabled public models the request's key may call (a token with model_limits sees only those, as in new-api). */
async function visibleModels(ctx: EdgeContext, req: FastifyRequest) {
  checkAdmission(ctx);
  const allowed = identityOf(req).token?.models;
  return (await listModels(ctx.db, true)).filter((m) => !allowed || allowed.has(m.public_model_id));
}

function anthropicList(models: PublicModel[]) {
  const data = models.map(anthropicModel);
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

const geminiList = (models: PublicModel[]) => ({ models: models.map(geminiModel) });

/** E06, E11, E18: the public models, in the shape of the client that asks (OpenAI's, Anthropic's, Gemini's). */
export function modelRoutes(ctx: EdgeContext) {
  return [
    implement('E06', {
      answers: { 200: { description: "The enabled public models: OpenAI's list, Anthropic's or Gemini's as the client's headers say", schema: Type.Union([ModelList, AnthropicModelList, GeminiModelList]) } },
      errors: edgeErrors.models,
      noStore: true,
      handler: async (req) => {
        const models = await visibleModels(ctx, req);
        const shape = listShapeOf(req);
        if (shape === 'anthropic') return anthropicList(models);
        if (shape === 'gemini') return geminiList(models);
        return { object: 'list', data: models.map(openaiModel) };
      },
    }),
    implement('E11', {
      answers: { 200: { description: "The enabled public model: OpenAI's model object, or Anthropic's", schema: Type.Union([Model, AnthropicModel]) } },
      errors: edgeErrors.model,
      noStore: true,
      schema: { params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }) },
      handler: async (req) => {
        checkAdmission(ctx);
        const id = req.params.id;
        // Outside the token's model_limits, or disabled, is the same answer as unknown (nothing is told).
        const allowed = identityOf(req).token?.models;
        const model = allowed && !allowed.has(id) ? undefined : await modelOf(ctx.db, id);
        if (!model || !model.enabled) throw new AppError('model_not_found', { params: { model: id, field: 'model' } });
        return listShapeOf(req) === 'anthropic' ? anthropicModel(model) : openaiModel(model);
      },
    }),
    implement('E18', {
      answers: { 200: { description: "The enabled public models as Gemini's model list", schema: GeminiModelList } },
      errors: edgeErrors.models,
      noStore: true,
      // `key` is where Google's clients may send the key (auth.ts); never logged (the request log drops the query).
      schema: { querystring: Type.Object({ key: Type.Optional(Type.String({ maxLength: 512 })), pageSize: Type.Optional(Type.String({ maxLength: 16 })), pageToken: Type.Optional(Type.String({ maxLength: 256 })) }) },
      handler: async (req) => geminiList(await visibleModels(ctx, req)),
    }),
  ];
}
