/**
 * A module beside the caller, with the caller's own extension: `.ts` when Node runs the sources (type stripping),
 * `.js` in the compiled package (`npm run build`), so a worker's entry point resolves in both.
 */
export const siblingScript = (callerUrl: string, name: string): URL =>
  new URL(`./${name}${callerUrl.endsWith(".ts") ? ".ts" : ".js"}`, callerUrl)
