#!/usr/bin/env node
/**
 * The `strata` executable: runs the CLI on the process's arguments and exits with its code.
 * A closed stdout pipe stops the output and exits 0. Ctrl-C interrupts the running command (its cleanup runs) and exits with 130.
 */
import { runCli } from "./cli.ts"
import { guardStreams } from "./support/output.ts"

// A reader that closes the pipe early (`strata hud | head -3`) ends the output, not the process with a trace.
guardStreams()

const controller = new AbortController()
process.once("SIGINT", () => controller.abort())

runCli(process.argv.slice(2), { signal: controller.signal }).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`strata: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  }
)
