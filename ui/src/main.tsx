/** Entry point of the web control plane (built by Vite into ui/dist, served by engram at /ui). */
import { render } from "preact"
import { App } from "./App.tsx"
import "./styles.css"

render(<App />, document.getElementById("app")!)
