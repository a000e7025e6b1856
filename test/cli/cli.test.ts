/**
 * The `engram` CLI as a user runs it: a child process (bin/engram.mjs) against the real server on a loopback
 * socket (this tier's database, the default offline models), and in-process with `--embedded` on a temporary data
 * directory. A LoCoMo conversation (the first three sessions of the first sample, read from ../shared/data/locomo
 * and written as a JSONL file in a temporary directory — never into this repository) is retained with
 * `--progress=plain` and recalled from; `--json` outputs are parsed back; exit codes are checked.
 */
import { assert, layer } from "@effect/vitest"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Option, Redacted } from "effect"
import { Command } from "effect/cli"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chooseEntry } from "../../bin/entry.mjs"
import { ModelsLive } from "../../layers/Models.ts"
import { engramCommand } from "../../src/cli/EngramCommand.ts"
import { cliBin, type CliRun, parsedJson, runCli } from "../support/CliProcess.ts"
import { freePort, spawnService, waitForHealth } from "../support/ChildService.ts"
import { loadLocomo, locomoAvailable, sessionsOf } from "../support/Locomo.ts"
import { freshDatabaseSettings, testApp, TestServer } from "../support/TestServer.ts"

const expectCode = (run: CliRun, code: number) =>
  assert.strictEqual(
    run.code,
    code,
    `exit ${run.code}, expected ${code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`
  )

/** Three sessions keep the test quick (about 50 turns, two sub-batches of 25) while exercising batching. */
const locomoSessions = 3

if (!locomoAvailable) {
  console.warn("test/cli/cli.test.ts: ../shared/data/locomo/locomo-dev.json is absent — the LoCoMo CLI test is skipped")
}

layer(testApp({}, undefined, ModelsLive), { excludeTestServices: true, timeout: "3 minutes" })("engram CLI", (it) => {
  it.effect("--help on the root and every command; usage errors exit 2", () =>
    Effect.gen(function*() {
      // As a user runs it: the root and every command group, each a child process.
      const root = yield* runCli(["--help"])
      expectCode(root, 0)
      const groups = ["serve", "banks", "retain", "recall", "reflect", "operations", "brain", "codebase", "dataset"]
      for (const command of groups) assert.match(root.stdout, new RegExp(`^  ${command}\\s`, "m"), command)
      const groupHelps = yield* Effect.forEach(
        ["banks", "operations", "brain", "codebase", "dataset"],
        (group) => runCli([group, "--help"]),
        { concurrency: 3 }
      )
      for (const run of groupHelps) {
        expectCode(run, 0)
        assert.include(run.stdout, "SUBCOMMANDS")
      }
      // Every leaf command's help, through the same command tree in-process (a process each would take minutes).
      const leaves = [
        ["serve"],
        ["banks", "list"],
        ["banks", "create"],
        ["banks", "delete"],
        ["banks", "stats"],
        ["retain"],
        ["recall"],
        ["reflect"],
        ["operations", "list"],
        ["operations", "watch"],
        ["operations", "cancel"],
        ["operations", "retry"],
        ["brain", "export"],
        ["brain", "import"],
        ["codebase", "import"],
        ["dataset", "import"],
        ["dataset", "export"]
      ]
      for (const path of leaves) {
        const printed: Array<string> = []
        const capture = {
          ...globalThis.console,
          log: (...args: ReadonlyArray<unknown>) => printed.push(args.join(" "))
        }
        yield* Command.runWith(engramCommand, { version: "test" })([...path, "--help"]).pipe(
          Effect.provideService(Console.Console, capture),
          Effect.provide(NodeServices.layer)
        )
        const help = printed.join("\n")
        assert.include(help, `USAGE\n  engram ${path.join(" ")}`, help)
        assert.include(help, "DESCRIPTION", help)
      }

      expectCode(yield* runCli(["banks", "lis"]), 2)
      const noInput = yield* runCli(["retain", "somebank"])
      expectCode(noInput, 2)
      assert.include(noInput.stderr, "give exactly one of TEXT, --file")
    }), 300_000)

  it.effect(
    "banks create, list, stats and delete; --json round-trips; an unknown bank exits 3 with the API's detail",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const url = ["--url", server.url]
        expectCode(yield* runCli(["banks", "create", "cli-bank", "--name", "CLI bank", ...url]), 0)

        // No --url: the address comes from SERVICE_API_HOST/PORT, as `npm start` would listen.
        const port = new URL(server.url).port
        const listed = yield* runCli(["banks", "list", "--json"], {
          SERVICE_API_HOST: "127.0.0.1",
          SERVICE_API_PORT: port
        })
        expectCode(listed, 0)
        const bank = parsedJson(listed).banks.find((item: any) => item.bank_id === "cli-bank")
        assert.strictEqual(bank?.name, "CLI bank")

        const table = yield* runCli(["banks", "list", ...url])
        expectCode(table, 0)
        assert.match(table.stdout, /^bank_id\s+name/m)
        assert.match(table.stdout, /^cli-bank\s+CLI bank/m)

        const stats = yield* runCli(["banks", "stats", "cli-bank", "--json", ...url])
        expectCode(stats, 0)
        assert.strictEqual(parsedJson(stats).total_nodes, 0)

        const unknown = yield* runCli(["banks", "stats", "no-such-bank", ...url])
        expectCode(unknown, 3)
        assert.include(unknown.stderr, "404")
        assert.include(unknown.stderr, "no-such-bank")
        assert.strictEqual(unknown.stdout, "")

        const deleted = yield* runCli(["banks", "delete", "cli-bank", "--json", ...url])
        expectCode(deleted, 0)
        parsedJson(deleted)
        const after = parsedJson(yield* runCli(["banks", "list", "--json", ...url]))
        assert.isUndefined(after.banks.find((item: any) => item.bank_id === "cli-bank"))

        // Nothing listens here: a server failure, exit 1.
        expectCode(yield* runCli(["banks", "list", "--url", "http://127.0.0.1:1"]), 1)
      }),
    240_000
  )

  it.effect.skipIf(!locomoAvailable)(
    "a LoCoMo conversation retained with --progress=plain, then recalled",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const url = ["--url", server.url]
        const sample = loadLocomo()[0]!
        const sessions = sessionsOf(sample).slice(0, locomoSessions)
        const turns = sessions.flatMap((session) =>
          session.items.map((item) => {
            const [speaker, ...rest] = item.content.split(": ")
            return { speaker, text: rest.join(": "), timestamp: item.timestamp, dia_id: item.metadata.dia_id }
          })
        )
        const file = join(mkdtempSync(join(tmpdir(), "engram-cli-")), "conversation.jsonl")
        writeFileSync(file, turns.map((turn) => JSON.stringify(turn)).join("\n") + "\n")

        const retained = yield* runCli(["retain", "locomo", "--jsonl", file, "--progress=plain", "--json", ...url])
        expectCode(retained, 0)
        const progress = retained.stderr.split("\n").filter((line) => line.startsWith("progress retain locomo: "))
        assert.isAtLeast(progress.length, 1, retained.stderr)
        for (const line of progress) assert.match(line, new RegExp(`: \\d+/${turns.length} items \\(\\d+%\\)`))
        assert.include(progress.at(-1)!, `${turns.length}/${turns.length} items (100%) completed`)
        const result = parsedJson(retained)
        assert.strictEqual(result.items_count, turns.length)
        assert.isTrue(result.operations.every((operation: any) => operation.status === "completed"))

        const stored = yield* server.request("GET", "/v1/default/banks/locomo/stats")
        assert.isAbove(stored.body.total_nodes, turns.length * 0.9)

        // "I went to a LGBTQ support group yesterday" is turn D1:3.
        const recalled = yield* runCli(
          ["recall", "locomo", "When did Caroline go to the LGBTQ support group?", "--json", ...url]
        )
        expectCode(recalled, 0)
        const top = parsedJson(recalled).results.slice(0, 10).map((memory: any) => memory.metadata?.dia_id)
        assert.include(top, "D1:3")
        const table = yield* runCli(["recall", "locomo", "LGBTQ support group", "--limit", "3", ...url])
        expectCode(table, 0)
        assert.match(table.stdout, /^#\s+score\s+type\s+when\s+memory/m)
        assert.include(table.stdout, "support group")

        const operations = yield* runCli(["operations", "list", "locomo", "--type", "batch_retain", "--json", ...url])
        expectCode(operations, 0)
        const batch = parsedJson(operations).operations.find((operation: any) =>
          operation.id === result.operations[0].operation_id
        )
        assert.strictEqual(batch?.status, "completed")
        const watched = yield* runCli(["operations", "watch", "locomo", batch.id, "--json", ...url])
        expectCode(watched, 0)
        assert.include(parsedJson(watched).progress, { done: turns.length, total: turns.length })
        // A finished operation cannot be cancelled: the API's 409 detail, exit 3.
        const cancelled = yield* runCli(["operations", "cancel", "locomo", batch.id, ...url])
        expectCode(cancelled, 3)
        assert.include(cancelled.stderr, "cannot be cancelled")

        const reflected = yield* runCli(["reflect", "locomo", "What did Caroline research?", "--json", ...url])
        expectCode(reflected, 0)
        assert.isString(parsedJson(reflected).text)
      }),
    180_000
  )

  it.effect(
    "files and a directory, a brain, a dataset and a codebase round-trip through the CLI",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const url = ["--url", server.url]
        const dir = mkdtempSync(join(tmpdir(), "engram-cli-files-"))
        mkdirSync(join(dir, "notes"))
        mkdirSync(join(dir, "node_modules"))
        writeFileSync(join(dir, "notes", "garden.md"), "# Garden\n\nAmara planted three fig trees behind the studio.\n")
        writeFileSync(join(dir, "boat.txt"), "Tobias repaints his sailboat Wren every April.\n")
        writeFileSync(join(dir, "node_modules", "skip.md"), "Nothing under node_modules is retained.\n")
        const single = join(mkdtempSync(join(tmpdir(), "engram-cli-file-")), "bakery.md")
        writeFileSync(single, "Ines opened a bakery on Harbour Street in 2021.\n")

        const fromDir = yield* runCli(["retain", "cli-files", "--dir", dir, "--progress=plain", "--json", ...url])
        expectCode(fromDir, 0)
        assert.strictEqual(parsedJson(fromDir).items_count, 2, fromDir.stdout)
        expectCode(yield* runCli(["retain", "cli-files", "--file", single, "--json", ...url]), 0)
        const documents = yield* server.request("GET", "/v1/default/banks/cli-files/documents")
        const ids = documents.body.items.map((document: any) => document.id).sort()
        assert.deepStrictEqual(ids, ["bakery.md", "boat.txt", "notes/garden.md"])
        const fig = parsedJson(yield* runCli(["recall", "cli-files", "Who planted fig trees?", "--json", ...url]))
        assert.include(fig.results[0].text, "fig")

        // The brain goes to a file and comes back as a valid .brain for the same bank.
        const brainFile = join(dir, "cli-files.brain")
        const exported = yield* runCli(["brain", "export", "cli-files", "--out", brainFile, "--json", ...url])
        expectCode(exported, 0)
        assert.isAbove(parsedJson(exported).size_bytes, 0)
        const validated = yield* runCli([
          "brain",
          "import",
          "cli-files",
          brainFile,
          "--validate-only",
          "--json",
          ...url
        ])
        expectCode(validated, 0)
        assert.isTrue(parsedJson(validated).valid)
        writeFileSync(join(dir, "broken.brain"), "not a brain")
        expectCode(
          yield* runCli(["brain", "import", "cli-files", join(dir, "broken.brain"), "--validate-only", ...url]),
          3
        )

        // Two chat examples in, the same two out.
        const examples = [
          {
            messages: [{ role: "user", content: "Where is the bakery?" }, {
              role: "assistant",
              content: "Harbour Street."
            }]
          },
          { messages: [{ role: "user", content: "What is the boat called?" }, { role: "assistant", content: "Wren." }] }
        ]
        const jsonl = join(dir, "examples.jsonl")
        writeFileSync(jsonl, examples.map((example) => JSON.stringify(example)).join("\n") + "\n")
        const imported = yield* runCli([
          "dataset",
          "import",
          "cli-files",
          jsonl,
          "--name",
          "cli examples",
          "--json",
          ...url
        ])
        expectCode(imported, 0)
        const dataset = parsedJson(imported)
        assert.strictEqual(dataset.imported_count, 2)
        const exportFile = join(dir, "export.jsonl")
        expectCode(
          yield* runCli(["dataset", "export", "cli-files", dataset.dataset_id, "--out", exportFile, ...url]),
          0
        )
        const lines = readFileSync(exportFile, "utf8").trim().split("\n").map((line) => JSON.parse(line))
        assert.deepStrictEqual(
          lines.map((line: any) => line.messages.map((message: any) => message.content)),
          examples.map((example) => example.messages.map((message) => message.content))
        )

        // One source file becomes a reviewable snapshot with its symbols.
        const source = join(dir, "pricing.ts")
        writeFileSync(source, "export const discount = (total: number) => total > 100 ? total * 0.9 : total\n")
        const codebase = yield* runCli([
          "codebase",
          "import",
          "cli-files",
          "--name",
          "pricing",
          "--file",
          source,
          "--json",
          ...url
        ])
        expectCode(codebase, 0)
        const snapshot = parsedJson(codebase)
        const symbols = yield* server.request(
          "GET",
          `/v1/default/banks/cli-files/codebases/${snapshot.codebase_id}/symbols?q=discount`
        )
        assert.strictEqual(symbols.status, 200, JSON.stringify(symbols.body))
        assert.include(JSON.stringify(symbols.body), "discount")
      }),
    240_000
  )

  it.effect(
    "serve runs the service on the port and data directory given, and stops cleanly on SIGTERM",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const port = yield* freePort
        // A data directory holding a copy of the run's migrated PGlite, as every test server starts on (creating one
        // from nothing, initdb and every migration, is the --embedded test's below).
        const dataDir = freshDatabaseSettings().dataDir!
        const served = yield* spawnService(cliBin, { SERVICE_API_DATABASE_URL: "" }, [
          "serve",
          "--port",
          String(port),
          "--data-dir",
          dataDir
        ])
        const url = `http://127.0.0.1:${port}`
        yield* waitForHealth(url, served)
        if (process.platform === "linux") {
          // The launcher became the server (same pid) with npm start's settings (bin/server-settings.mjs): a young
          // generation of 2 x 16 MiB and malloc's fixed thresholds (glibc splits its copy of the variable in place at
          // the colons, so the process's environment shows the first tunable).
          const pid = served.process.pid!
          const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
          assert.include(commandLine, "--max-semi-space-size=16")
          // The compiled program when `npm install` built dist/ from these sources (bin/entry.mjs), else the sources.
          assert.include(commandLine, chooseEntry(join(import.meta.dirname, "../.."), "cli/main").path)
          const environment = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")
          assert.isTrue(
            environment.some((entry) => entry.startsWith("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072")),
            environment.filter((entry) => entry.startsWith("GLIBC")).join(", ")
          )
        }
        expectCode(yield* runCli(["banks", "create", "served", "--url", url]), 0)
        served.process.kill("SIGTERM")
        assert.strictEqual(yield* Effect.promise(() => served.exited), 0, served.output())
        // The bank outlived the process: it was stored in the data directory given. This time as `npm start` runs
        // it, `serve` alone configured by the environment: the service's own entry, not the command line's.
        const again = yield* spawnService(cliBin, {
          SERVICE_API_DATABASE_URL: "",
          SERVICE_API_PORT: String(port),
          SERVICE_API_DATA_DIR: dataDir
        }, ["serve"])
        yield* waitForHealth(url, again)
        if (process.platform === "linux") {
          const commandLine = readFileSync(`/proc/${again.process.pid!}/cmdline`, "utf8").split("\0")
          assert.include(commandLine, chooseEntry(join(import.meta.dirname, "../.."), "main").path)
          assert.include(commandLine, "--max-semi-space-size=16")
        }
        const listed = parsedJson(yield* runCli(["banks", "list", "--json", "--url", url]))
        assert.isTrue(listed.banks.some((bank: any) => bank.bank_id === "served"))
      })),
    240_000
  )

  // The embedded engine runs PGlite in its own data directory (and the CLI runs on the PGlite tier only).
  it.effect("--embedded runs the engine in-process on a data directory", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "engram-cli-embedded-"))
      const embedded = ["--embedded", "--data-dir", dataDir]
      // Retain creates the bank on first use; each invocation starts and stops the engine (a few seconds).
      const retained = yield* runCli([
        "retain",
        "local",
        "Noor walks Pepper along the canal every evening.",
        "--json",
        ...embedded
      ])
      expectCode(retained, 0)
      assert.strictEqual(parsedJson(retained).memories_created, 1)
      // A second process on the same directory sees what the first one stored.
      const recalled = yield* runCli(["recall", "local", "Who walks along the canal?", "--json", ...embedded])
      expectCode(recalled, 0)
      assert.include(parsedJson(recalled).results[0].text, "Pepper")
    }), 240_000)
})

layer(testApp({ tenantExtension: "api_key", tenantApiKey: Option.some(Redacted.make("cli-secret")) }), {
  excludeTestServices: true,
  timeout: "3 minutes"
})("engram CLI with the API key on", (it) => {
  it.effect(
    "the key comes from --api-key or SERVICE_API_TENANT_API_KEY; without it the 401 exits 3",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const url = ["--url", server.url]
        const refused = yield* runCli(["banks", "list", ...url], { SERVICE_API_TENANT_API_KEY: "" })
        expectCode(refused, 3)
        assert.include(refused.stderr, "401")
        assert.notInclude(refused.stderr + refused.stdout, "cli-secret")
        expectCode(yield* runCli(["banks", "list", "--api-key", "cli-secret", ...url]), 0)
        const fromEnv = yield* runCli(["banks", "list", "--json", ...url], { SERVICE_API_TENANT_API_KEY: "cli-secret" })
        expectCode(fromEnv, 0)
        assert.isArray(parsedJson(fromEnv).banks)
      }),
    120_000
  )
})
