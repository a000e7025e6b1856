/**
 * Pure tree rules of the knowledge base over a bank's flat node list: nesting it for display, a node's subtree, and
 * whether a move would put a folder inside itself. No I/O; the callers load the nodes and hold the bank's lock.
 */

export interface TreeEntry {
  readonly id: string
  readonly parentId: string | null
}

/**
 * A node and everything under it. Walks children breadth first with a visited set, so a cycle left by a bad
 * restore cannot loop forever.
 */
export const subtreeOf = (entries: ReadonlyArray<TreeEntry>, rootId: string): ReadonlyArray<string> => {
  const children = childrenByParent(entries)
  const found = new Set<string>([rootId])
  const queue = [rootId]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (found.has(child.id)) continue
      found.add(child.id)
      queue.push(child.id)
    }
  }
  return [...found]
}

/** Whether moving `nodeId` under `newParentId` would make the node its own ancestor. */
export const wouldCycle = (entries: ReadonlyArray<TreeEntry>, nodeId: string, newParentId: string): boolean =>
  subtreeOf(entries, nodeId).includes(newParentId)

const childrenByParent = <E extends TreeEntry>(entries: ReadonlyArray<E>) => {
  const children = new Map<string | null, Array<E>>()
  for (const entry of entries) {
    const list = children.get(entry.parentId) ?? []
    list.push(entry)
    children.set(entry.parentId, list)
  }
  return children
}

export interface Nested<E> {
  readonly entry: E
  readonly children: ReadonlyArray<Nested<E>>
}

/**
 * The entries as a forest, each level sorted by `order`. An entry whose parent is missing (or that sits in a
 * cycle) is shown at the root rather than hidden: a client must always be able to reach, move or delete it.
 */
export const nest = <E extends TreeEntry>(
  entries: ReadonlyArray<E>,
  order: (a: E, b: E) => number
): ReadonlyArray<Nested<E>> => {
  const ids = new Set(entries.map((entry) => entry.id))
  const children = childrenByParent(entries)
  const placed = new Set<string>()
  const build = (entry: E): Nested<E> => {
    placed.add(entry.id)
    const below = (children.get(entry.id) ?? []).filter((child) => !placed.has(child.id)).sort(order)
    return { entry, children: below.map(build) }
  }
  const roots = entries.filter((entry) => entry.parentId === null || !ids.has(entry.parentId)).sort(order).map(build)
  // Whatever is left hangs in a cycle: lift one member of each to the root.
  const stranded = entries.filter((entry) => !placed.has(entry.id)).sort(order)
  for (const entry of stranded) if (!placed.has(entry.id)) roots.push(build(entry))
  return roots
}
