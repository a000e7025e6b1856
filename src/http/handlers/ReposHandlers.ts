/** REST handlers for memory repos: thin translations between the HTTP contract and `MemoryRepos`. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { MemoryRepos } from "../../repos/MemoryRepos.ts"
import { EngramApi } from "../api/Api.ts"

export const ReposHandlers = HttpApiBuilder.group(
  EngramApi,
  "repos",
  Effect.fn(function*(handlers) {
    const repos = yield* MemoryRepos
    return handlers.handleAll({
      create: ({ payload }) => repos.create(payload),
      list: () => Effect.map(repos.list(), (all) => ({ repos: all })),
      get: ({ params }) => repos.get(params.repo_id),
      bankRepo: ({ params }) => Effect.map(repos.forBank(params.bank_id), (repo) => ({ repo })),
      enable: ({ params, payload }) => repos.enable(params.bank_id, payload?.repo_name),
      bankBranches: ({ params }) => Effect.map(repos.branchesOfBank(params.bank_id), (branches) => ({ branches })),
      branches: ({ params }) => Effect.map(repos.branches(params.repo_id), (branches) => ({ branches })),
      createBranch: ({ params, payload }) => repos.createBranch(params.repo_id, payload),
      checkout: ({ params, payload }) => repos.checkout(params.repo_id, payload.branch_name),
      fork: ({ params, payload }) => repos.fork(params.repo_id, payload),
      commit: ({ params, payload }) => repos.commit(params.repo_id, payload),
      status: ({ params, query }) => repos.status(params.repo_id, query.branch_name),
      log: ({ params, query }) => repos.log(params.repo_id, query),
      diff: ({ params, query }) => repos.diff(params.repo_id, query),
      resetHard: ({ params, payload }) => repos.resetHard(params.repo_id, payload)
    })
  })
)
