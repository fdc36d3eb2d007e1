/**
 * Extraction of many files at once: in worker threads (one tree-sitter runtime each)
 * when the built worker script is present and the batch is large, else in this
 * thread. Results come back in job order, identical either way.
 */
import { existsSync } from "node:fs"
import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import { extractFile } from "./extract/index.ts"
import type { FileSymbols, Language } from "../syntax/model.ts"
import type { Parsers } from "../syntax/parser.ts"

/** One file to extract. */
export interface ExtractJob {
  readonly path: string
  readonly language: Language
  readonly source: string
}

/** Below this many files the cost of starting workers outweighs the gain. */
export const WORKER_THRESHOLD = 128

/** The compiled worker script, or undefined when running from TypeScript sources. */
const workerScript = (): URL | undefined => {
  if (!import.meta.url.endsWith(".js")) return undefined
  const url = new URL("./worker.js", import.meta.url)
  return existsSync(fileURLToPath(url)) ? url : undefined
}

/** How many workers `auto` means: one per core, at most four. */
export const defaultWorkers = (): number => Math.max(1, Math.min(4, availableParallelism()))

/** Called with the number of jobs finished so far. */
export type OnExtracted = (done: number) => void

const inThread = async (parsers: Parsers, jobs: ReadonlyArray<ExtractJob>, onDone?: OnExtracted): Promise<Array<FileSymbols>> => {
  const out: Array<FileSymbols> = []
  for (const job of jobs) {
    await parsers.ensure(job.language)
    out.push(extractFile(parsers, job.path, job.source, job.language))
    onDone?.(out.length)
  }
  return out
}

type Reply = { readonly ready: true } | { readonly index: number; readonly result: FileSymbols } | { readonly index: number; readonly error: string }

const inWorkers = (script: URL, jobs: ReadonlyArray<ExtractJob>, count: number, onDone?: OnExtracted): Promise<Array<FileSymbols | undefined>> =>
  new Promise((resolve) => {
    const results: Array<FileSymbols | undefined> = new Array<FileSymbols | undefined>(jobs.length)
    let next = 0
    let done = 0
    let live = count
    const workers: Array<Worker> = []
    const finish = (): void => {
      for (const w of workers) void w.terminate()
      resolve(results)
    }
    const feed = (worker: Worker): void => {
      if (next >= jobs.length) {
        live--
        if (live === 0) finish()
        return
      }
      const index = next++
      worker.postMessage({ index, ...jobs[index]! })
    }
    for (let i = 0; i < count; i++) {
      const worker = new Worker(script)
      workers.push(worker)
      worker.on("message", (reply: Reply) => {
        if (!("ready" in reply)) {
          if ("result" in reply) results[reply.index] = reply.result
          done++
          onDone?.(done)
        }
        feed(worker)
      })
      // A worker that dies leaves its jobs undefined; the caller extracts those in-thread.
      worker.on("error", () => {
        live--
        if (live === 0) finish()
      })
    }
    if (jobs.length === 0 || done === jobs.length) finish()
  })

/**
 * Extract `jobs`, in `workers` threads when there are enough of them (0 forces this
 * thread). The result has one entry per job, in order. `onDone` hears how many jobs are
 * finished, as they finish.
 */
export const extractAll = async (parsers: Parsers, jobs: ReadonlyArray<ExtractJob>, workers: number, onDone?: OnExtracted): Promise<Array<FileSymbols>> => {
  const script = workerScript()
  if (script === undefined || workers <= 0 || jobs.length < WORKER_THRESHOLD) return inThread(parsers, jobs, onDone)
  const results = await inWorkers(script, jobs, Math.min(workers, Math.ceil(jobs.length / 16)), onDone)
  const out: Array<FileSymbols> = []
  for (const [i, result] of results.entries()) out.push(result ?? (await inThread(parsers, [jobs[i]!]))[0]!)
  return out
}
