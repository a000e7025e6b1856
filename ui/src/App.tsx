/** The shell: header with the bank picker, the bank's page list, the current page, and the key prompt. */
import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"
import { apiKey, get, onUnauthorized } from "./api.ts"
import { KeyPrompt } from "./components/KeyPrompt.tsx"
import { useResource } from "./hooks.ts"
import { BankSettingsPage } from "./pages/BankSettingsPage.tsx"
import { BanksPage } from "./pages/BanksPage.tsx"
import { CodebasesPage } from "./pages/CodebasesPage.tsx"
import { DocumentsPage } from "./pages/DocumentsPage.tsx"
import { GraphPage } from "./pages/GraphPage.tsx"
import { MemoriesPage } from "./pages/MemoriesPage.tsx"
import { OperationsPage } from "./pages/OperationsPage.tsx"
import { readViews } from "./pages/ReadViews.tsx"
import { RecallPage } from "./pages/RecallPage.tsx"
import { ReflectPage } from "./pages/ReflectPage.tsx"
import { hrefOf, linkHandler, navigate, useRoute } from "./router.ts"

const bankPages: ReadonlyArray<readonly [string, string, (bank: string) => ComponentChildren]> = [
  ["memories", "Memories", (bank) => <MemoriesPage bank={bank} />],
  ["documents", "Documents", (bank) => <DocumentsPage bank={bank} />],
  ["recall", "Recall debugger", (bank) => <RecallPage bank={bank} />],
  ["reflect", "Reflect", (bank) => <ReflectPage bank={bank} />],
  ["graph", "Graph", (bank) => <GraphPage bank={bank} />],
  ["operations", "Operations", (bank) => <OperationsPage bank={bank} />],
  ["settings", "Settings", (bank) => <BankSettingsPage bank={bank} />],
  ["codebases", "Codebases", (bank) => <CodebasesPage bank={bank} />],
  ...readViews.map((view) => [view.page, view.title, (bank: string) => view.render(bank)] as const)
]

export const App = () => {
  const route = useRoute()
  const [needKey, setNeedKey] = useState(false)
  const [keyVersion, setKeyVersion] = useState(0)
  useEffect(() => onUnauthorized(() => setNeedKey(true)), [])
  const banks = useResource(
    () => get<{ banks: Array<{ bank_id: string; name: string | null }> }>("/v1/default/banks"),
    [keyVersion, route.bank]
  )
  const current = bankPages.find(([page]) => page === route.page)
  const title = route.bank === null ? "Banks" : current?.[1] ?? "Not found"
  useEffect(() => {
    document.title = route.bank === null ? "engram · banks" : `engram · ${route.bank} · ${title}`
  }, [route.bank, title])

  return (
    <div class="shell" key={keyVersion}>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href={hrefOf(null, "banks")} onClick={linkHandler}>engram</a>
        <label class="bank-picker">
          <span class="sr-only">Bank</span>
          <select
            aria-label="Bank"
            value={route.bank ?? ""}
            onChange={(event) => {
              const bank = event.currentTarget.value
              navigate(
                bank === "" ? hrefOf(null, "banks") : hrefOf(bank, route.bank === null ? "memories" : route.page)
              )
            }}
          >
            <option value="">All banks</option>
            {route.bank !== null && !banks.data?.banks.some((bank) => bank.bank_id === route.bank) &&
              <option value={route.bank}>{route.bank}</option>}
            {banks.data?.banks.map((bank) => (
              <option value={bank.bank_id}>{bank.name ? `${bank.name} (${bank.bank_id})` : bank.bank_id}</option>
            ))}
          </select>
        </label>
        {apiKey.get() !== null && (
          <button
            type="button"
            class="link"
            onClick={() => {
              apiKey.clear()
              setKeyVersion((v) => v + 1)
            }}
          >
            Forget key
          </button>
        )}
      </header>
      <div class="body">
        {route.bank !== null && (
          <nav class="side" aria-label="Bank pages">
            <ul>
              {bankPages.map(([page, label]) => (
                <li>
                  <a
                    href={hrefOf(route.bank, page)}
                    onClick={linkHandler}
                    aria-current={page === route.page ? "page" : undefined}
                  >
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
        <main id="main" tabIndex={-1}>
          <h1>{title}{route.bank !== null && <span class="muted">· {route.bank}</span>}</h1>
          {route.bank === null
            ? <BanksPage onChanged={banks.reload} />
            : current === undefined
            ? <p>No page named “{route.page}”.</p>
            : <div key={`${route.bank}/${route.page}`}>{current[2](route.bank)}</div>}
        </main>
      </div>
      {needKey && (
        <KeyPrompt
          onSaved={() => {
            setNeedKey(false)
            setKeyVersion((v) => v + 1)
          }}
        />
      )}
    </div>
  )
}
