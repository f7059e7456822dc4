import { Type } from '@sinclair/typebox';

/** Pieces of the caller formats' body schemas. */
export const MODEL = Type.String({ minLength: 1, maxLength: 255 });
export const STREAM = Type.Optional(Type.Boolean());
/** A JSON object the converters read field by field (content blocks, parts, settings). */
export const BLOCK = Type.Object({}, { additionalProperties: true });
/** One with a `type` (Anthropic's content blocks, tool choice, thinking). */
export const TYPED = Type.Object({ type: Type.String() }, { additionalProperties: true });
