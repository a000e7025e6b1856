/** Reflect: ask a question over the bank; the answer, what it was based on (memories, mental models, directives), the tool trace. */
import { useState } from "preact/hooks"
import { bankPath, request } from "../api.ts"
import { DataTable } from "../components/DataTable.tsx"
import { JsonView } from "../components/JsonView.tsx"
import { Empty, ErrorBox } from "../components/States.tsx"
import { useAction } from "../hooks.ts"

export const ReflectPage = ({ bank }: { bank: string }) => {
  const [query, setQuery] = useState("")
  const [budget, setBudget] = useState("low")
  const [tags, setTags] = useState("")
  const [schema, setSchema] = useState("")
  const [toolTrace, setToolTrace] = useState(true)
  const [answer, setAnswer] = useState<any>(null)
  const reflect = useAction()
  return (
    <>
      <form
        class="card grid-form"
        aria-label="Reflect request"
        onSubmit={async (event) => {
          event.preventDefault()
          const result = await reflect.run(() => {
            const tagList = tags.split(",").map((tag) => tag.trim()).filter((tag) => tag !== "")
            let responseSchema: unknown = undefined
            if (schema.trim() !== "") {
              try {
                responseSchema = JSON.parse(schema)
              } catch {
                throw new Error("response_schema: not valid JSON")
              }
            }
            return request("POST", bankPath(bank, "/reflect"), {
              query,
              budget,
              include: { facts: {}, ...(toolTrace ? { tool_calls: { output: true } } : {}) },
              ...(tagList.length ? { tags: tagList } : {}),
              ...(responseSchema === undefined ? {} : { response_schema: responseSchema })
            })
          })
          if (result !== undefined) setAnswer(result)
        }}
      >
        <label class="wide">
          Question <input name="query" required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <label>
          Budget
          <select value={budget} onChange={(e) => setBudget(e.currentTarget.value)}>
            {["low", "mid", "high"].map((b) => <option value={b}>{b}</option>)}
          </select>
        </label>
        <label>
          Tags (comma-separated) <input value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
        </label>
        <label class="wide">
          Response schema (JSON Schema, optional){" "}
          <textarea rows={2} value={schema} onInput={(e) => setSchema(e.currentTarget.value)} />
        </label>
        <label class="inline">
          <input type="checkbox" checked={toolTrace} onChange={(e) => setToolTrace(e.currentTarget.checked)} />{" "}
          Include the tool-call trace
        </label>
        <div class="actions wide">
          <button type="submit" disabled={reflect.busy}>{reflect.busy ? "Reflecting…" : "Reflect"}</button>
        </div>
        <div class="wide">
          <ErrorBox error={reflect.error} />
        </div>
      </form>
      {answer !== null && (
        <>
          <section class="card" aria-label="Answer">
            <h2>Answer</h2>
            <div class="answer">{answer.text}</div>
            {answer.structured_output !== null && (
              <JsonView value={answer.structured_output} label="Structured output" open />
            )}
            <p class="muted">Tokens: {answer.usage?.input_tokens ?? 0} in, {answer.usage?.output_tokens ?? 0} out</p>
          </section>
          <section class="card" aria-label="Based on">
            <h2>Based on</h2>
            {answer.based_on === null ? <Empty>No evidence list returned.</Empty> : (
              <>
                <DataTable
                  caption="Memories"
                  rows={answer.based_on.memories}
                  empty="No memory."
                  columns={[
                    { label: "Type", render: (m: any) => m.type ?? m.fact_type ?? "—" },
                    { label: "Memory", render: (m: any) => m.text }
                  ]}
                />
                <DataTable
                  caption="Mental models"
                  rows={answer.based_on.mental_models}
                  empty="No mental model."
                  columns={[
                    { label: "Mental model", render: (m: any) => m.name ?? m.id },
                    { label: "Text", render: (m: any) => m.text }
                  ]}
                />
                <DataTable
                  caption="Directives"
                  rows={answer.based_on.directives}
                  empty="No directive."
                  columns={[
                    { label: "Directive", render: (d: any) => d.name },
                    { label: "Content", render: (d: any) => d.content }
                  ]}
                />
              </>
            )}
          </section>
          {answer.trace !== null && (
            <section class="card" aria-label="Trace">
              <h2>Tool calls</h2>
              <DataTable
                caption="Tool calls"
                rows={answer.trace.tool_calls}
                empty="No tool call."
                columns={[
                  { label: "Iteration", render: (c: any) => c.iteration },
                  { label: "Tool", render: (c: any) => c.tool },
                  { label: "Input", render: (c: any) => <code>{JSON.stringify(c.input)}</code> },
                  { label: "ms", render: (c: any) => c.duration_ms }
                ]}
              />
              <JsonView value={answer.trace} label="Raw trace" />
            </section>
          )}
        </>
      )}
    </>
  )
}
