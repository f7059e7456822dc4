import { Type, type TSchema } from '@sinclair/typebox';
import type { Page, PageQuery } from '../../contract/customer.js';

/** new-api's page size when none is asked for (its ItemsPerPage), and its cap. */
export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

const Int = Type.Integer();
const size = Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE }));

/**
 * new-api's paging query (common.GetPageQuery): `p` from 1 and `page_size`, or its older spellings `ps` and
 * `size` (its key page sends `size`). Out of range or not a number: 400 INVALID_PARAMETERS, as AS05.
 */
export const pagingQuery = {
  p: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  page_size: size,
  ps: size,
  size,
};

export interface PagingInput {
  p?: number;
  page_size?: number;
  ps?: number;
  size?: number;
}

export function pageOf(q: PagingInput): PageQuery {
  return { page: q.p ?? 1, size: q.page_size ?? q.ps ?? q.size ?? DEFAULT_PAGE_SIZE };
}

/** new-api's page answer (common.PageInfo): {page, page_size, total, items}. */
export function pageAnswer<T, U = T>(page: PageQuery, result: Page<T>, view?: (item: T) => U) {
  return {
    page: page.page,
    page_size: page.size,
    total: result.total,
    items: view ? result.items.map(view) : (result.items as unknown as U[]),
  };
}

/** The schema of a page of `item`. */
export function PageOf(item: TSchema) {
  return Type.Object({ page: Int, page_size: Int, total: Int, items: Type.Array(item) });
}
