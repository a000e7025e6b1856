/**
 * REST handlers for memory repos: thin translations between the HTTP contract and `MemoryRepos`. A repo belongs to
 * its root bank: a key of SERVICE_API_TENANT_API_KEYS sees only the repos of banks it reaches (others answer 404,
 * as if missing), and cannot clone or fork into or out of banks it does not reach.
 */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { reachable, reachesBank, requireBank } from "../../auth/BankAccess.ts"
import { NotFound } from "../../domain/Errors.ts"
import { MemoryRepos } from "../../repos/MemoryRepos.ts"
import { EngramApi } from "../api/Api.ts"

export const ReposHandlers = HttpApiBuilder.group(
  EngramApi,
  "repos",
  Effect.fn(function*(handlers) {
    const repos = yield* MemoryRepos

    /**
     * Runs `effect` when the key reaches the repo's root bank; a repo it does not reach is answered as missing. Reads
     * the repo's row only: the summary (`repos.get`) computes every branch's status, which doubled a status's or a
     * commit's cost over HTTP.
     */
    const inReachableRepo = <A, E, R>(repoId: string, effect: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        if (!(yield* reachesBank(yield* repos.rootBankOf(repoId)))) return yield* NotFound.of("repo", repoId)
        return yield* effect
      })

    return handlers.handleAll({
      create: ({ payload }) =>
        Effect.gen(function*() {
          yield* requireBank(payload.bank_id)
          if (payload.source_bank_id != null) yield* requireBank(payload.source_bank_id, "source_bank_id")
          return yield* repos.create(payload)
        }),
      list: () =>
        repos.list().pipe(
          Effect.flatMap((all) => reachable(all, (repo) => repo.root_bank_id)),
          Effect.map((all) => ({ repos: all }))
        ),
      get: ({ params }) => inReachableRepo(params.repo_id, repos.get(params.repo_id)),
      bankRepo: ({ params }) => Effect.map(repos.forBank(params.bank_id), (repo) => ({ repo })),
      enable: ({ params, payload }) => repos.enable(params.bank_id, payload?.repo_name),
      bankBranches: ({ params }) => Effect.map(repos.branchesOfBank(params.bank_id), (branches) => ({ branches })),
      branches: ({ params }) =>
        inReachableRepo(params.repo_id, Effect.map(repos.branches(params.repo_id), (branches) => ({ branches }))),
      createBranch: ({ params, payload }) =>
        inReachableRepo(params.repo_id, repos.createBranch(params.repo_id, payload)),
      deleteBranch: ({ params }) =>
        inReachableRepo(
          params.repo_id,
          Effect.map(repos.deleteBranch(params.repo_id, params.branch_name), (branches) => ({ branches }))
        ),
      checkout: ({ params, payload }) =>
        inReachableRepo(params.repo_id, repos.checkout(params.repo_id, payload.branch_name)),
      fork: ({ params, payload }) =>
        inReachableRepo(
          params.repo_id,
          Effect.andThen(requireBank(payload.target_bank_id, "target_bank_id"), repos.fork(params.repo_id, payload))
        ),
      commit: ({ params, payload }) => inReachableRepo(params.repo_id, repos.commit(params.repo_id, payload)),
      status: ({ params, query }) => inReachableRepo(params.repo_id, repos.status(params.repo_id, query.branch_name)),
      log: ({ params, query }) => inReachableRepo(params.repo_id, repos.log(params.repo_id, query)),
      diff: ({ params, query }) => inReachableRepo(params.repo_id, repos.diff(params.repo_id, query)),
      resetHard: ({ params, payload }) => inReachableRepo(params.repo_id, repos.resetHard(params.repo_id, payload))
    })
  })
)
