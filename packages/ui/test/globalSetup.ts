// The page bundle the server and the replay report inline. The test command's compile
// bundles it before any test starts (and the CLI's tests serve it meanwhile), so this only
// bundles it for a lone `vitest run`, when it is missing or older than the page's sources.
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { isStale } from "@strata/test-support/build"

const UI = fileURLToPath(new URL("..", import.meta.url))

export default function setup(): void {
  if (isStale(UI, "page/app.js", "page")) execFileSync(process.execPath, [fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))], { stdio: "inherit" })
}
