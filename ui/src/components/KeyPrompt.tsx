/** Asks for the API key when the server refused a request (SERVICE_API_TENANT_EXTENSION=api_key); kept for the tab only. */
import { useState } from "preact/hooks"
import { apiKey } from "../api.ts"

export const KeyPrompt = ({ onSaved }: { onSaved: () => void }) => {
  const [key, setKey] = useState("")
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="key-title">
      <form
        class="card key-prompt"
        onSubmit={(event) => {
          event.preventDefault()
          if (key.trim() === "") return
          apiKey.set(key.trim())
          onSaved()
        }}
      >
        <h2 id="key-title">API key required</h2>
        <p>
          This engram requires an API key. It is kept in this tab's session storage and sent as{" "}
          <code>Authorization: Bearer</code>.
        </p>
        <label>
          API key
          <input
            type="password"
            autoFocus
            autoComplete="off"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Use key</button>
      </form>
    </div>
  )
}
