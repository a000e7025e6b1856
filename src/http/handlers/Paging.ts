/** The paging defaults every list route shares: the first 100 items. */
export const paging = (query: { readonly limit?: number; readonly offset?: number }) => ({
  limit: query.limit ?? 100,
  offset: query.offset ?? 0
})
