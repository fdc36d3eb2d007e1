/**
 * The extraction worker: parses files sent by `extractAll` on its own tree-sitter
 * runtime, so a cold index uses every core. Not part of the public API.
 */
import { parentPort } from "node:worker_threads"
import { extractFile } from "./extract/index.ts"
import type { Language } from "../syntax/model.ts"
import { Parsers } from "../syntax/parser.ts"

interface Job {
  readonly index: number
  readonly path: string
  readonly language: Language
  readonly source: string
}

const port = parentPort
if (port !== null) {
  const parsers = await Parsers.load()
  port.on("message", (job: Job) => {
    parsers
      .ensure(job.language)
      .then(() => port.postMessage({ index: job.index, result: extractFile(parsers, job.path, job.source, job.language) }))
      .catch((error: unknown) => port.postMessage({ index: job.index, error: error instanceof Error ? error.message : String(error) }))
  })
  port.postMessage({ ready: true })
}
