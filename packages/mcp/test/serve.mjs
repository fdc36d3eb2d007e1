/* global process */
// The stdio server as `strata mcp --repo DIR` runs it, from this package's dist/ (the CLI
// depends on this package, not the other way round). Usage: node serve.mjs DIR
import { Effect } from "effect"
import { runMcpServer } from "../dist/index.js"

await Effect.runPromise(runMcpServer({ root: process.argv[2] ?? "." }))
