#!/usr/bin/env node
/**
 * The `strata` executable: runs the CLI on the process's arguments and exits with its code.
 * Ctrl-C interrupts the running command (its cleanup runs) and exits with 130.
 */
import { runCli } from "./cli.ts"

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
