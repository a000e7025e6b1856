/**
 * The formatter: dprint's TypeScript plugin (from npm, run in-process through @dprint/formatter: the dprint CLI would
 * fetch its plugins over the network) with the settings the Effect repository formats with. `node .ci/format.ts`
 * rewrites files that differ; `--check` lists them and exits 1 (run by `npm run check`).
 * Import declarations keep their order: modules are evaluated in import order, and a formatter must not change what
 * a program does.
 */
import { createFromBuffer } from "@dprint/formatter"
import { getPath } from "@dprint/typescript"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const check = process.argv.includes("--check")
const formatter = createFromBuffer(readFileSync(getPath()))
formatter.setConfig({ indentWidth: 2, lineWidth: 120 }, {
  semiColons: "asi",
  quoteStyle: "alwaysDouble",
  trailingCommas: "never",
  operatorPosition: "maintain",
  "arrowFunction.useParentheses": "force",
  "module.sortImportDeclarations": "maintain"
})

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.ts", "*.tsx"], {
  cwd: root,
  encoding: "utf8"
}).split("\n").filter((file) => file !== "" && !file.endsWith(".d.ts") && existsSync(resolve(root, file)))

const differing: Array<string> = []
for (const file of files) {
  const path = resolve(root, file)
  const text = readFileSync(path, "utf8")
  const formatted = formatter.formatText({ filePath: path, fileText: text })
  if (formatted === text) continue
  differing.push(file)
  if (!check) writeFileSync(path, formatted)
}
if (check && differing.length > 0) {
  console.error(`${differing.length} files are not formatted (run \`npm run format\`):\n${differing.join("\n")}`)
  process.exit(1)
}
console.log(check ? `${files.length} files formatted` : `${differing.length} of ${files.length} files reformatted`)
