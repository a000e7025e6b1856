/**
 * Codebases wired: the store, the commands (which register the import and approval task types), and the reads
 * and code intelligence over parsed snapshots. Needs the memory services (retain, documents, embeddings) below it.
 */
import { Layer } from "effect"
import { CodebaseReads } from "../src/codebases/CodebaseReads.ts"
import { Codebases } from "../src/codebases/Codebases.ts"
import { CodebaseStore } from "../src/codebases/CodebaseStore.ts"
import { CodeIntelligence } from "../src/codebases/CodeIntelligence.ts"

export const CodebasesLive = Layer.mergeAll(
  Codebases.layer,
  CodeIntelligence.layer.pipe(Layer.provideMerge(CodebaseReads.layer))
).pipe(Layer.provideMerge(CodebaseStore.layer))
