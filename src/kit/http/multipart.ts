import { FormData, Response } from 'undici';

/** A file of a multipart/form-data body, its bytes as they were sent. */
export class UploadedFile {
  constructor(
    readonly filename: string,
    /** Its media type as the sender gave it ('' when none). */
    readonly type: string,
    readonly bytes: Uint8Array,
  ) {}
}

export type FormValue = string | UploadedFile;
/** A form as a body object: each field by name, a field sent more than once as the list of its values. */
export type FormFields = Record<string, FormValue | FormValue[]>;

/** A multipart/form-data body (whole, within the route's body limit) as its fields; throws when it is not one. */
export async function parseMultipart(bytes: Uint8Array, contentType: string): Promise<FormFields> {
  const form = await new Response(bytes, { headers: { 'content-type': contentType } }).formData();
  const fields = new Map<string, FormValue[]>();
  for (const [name, value] of form) {
    const v = typeof value === 'string' ? value : new UploadedFile(value.name, value.type, new Uint8Array(await value.arrayBuffer()));
    fields.set(name, [...(fields.get(name) ?? []), v]);
  }
  // Entries, not assignments: a field named __proto__ stays a plain key.
  return Object.fromEntries([...fields].map(([name, values]) => [name, values.length === 1 ? values[0]! : values]));
}

/** A file to send in a form, under its field name. */
export interface FormFile {
  field: string;
  filename: string;
  type: string;
  bytes: Uint8Array;
}

/**
 * A form to send (undici's FormData, which undici's request() encodes): the text fields (a list as the same
 * field repeated; other values as their text) and the files, their bytes unchanged.
 */
export function formDataOf(fields: Record<string, unknown>, files: readonly FormFile[]): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined && v !== null) form.append(name, typeof v === 'string' ? v : JSON.stringify(v));
  }
  for (const f of files) form.append(f.field, new Blob([f.bytes as Uint8Array<ArrayBuffer>], f.type ? { type: f.type } : {}), f.filename);
  return form;
}

/** A body object's text fields and its files (UploadedFile values, under their field names). */
export function splitForm(body: Record<string, unknown>): { fields: Record<string, unknown>; files: FormFile[] } {
  const fields: [string, unknown][] = [];
  const files: FormFile[] = [];
  for (const [name, value] of Object.entries(body)) {
    const values = Array.isArray(value) ? value : [value];
    const uploaded = values.filter((v): v is UploadedFile => v instanceof UploadedFile);
    for (const f of uploaded) files.push({ field: name, filename: f.filename, type: f.type, bytes: f.bytes });
    const rest = values.filter((v) => !(v instanceof UploadedFile));
    if (rest.length) fields.push([name, Array.isArray(value) ? rest : rest[0]]);
  }
  return { fields: Object.fromEntries(fields), files };
}

export { FormData };
