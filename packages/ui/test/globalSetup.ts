// The page bundle the server and the replay report inline: built once before the tests.
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))], { stdio: "inherit" })
}
