/**
 * One request's `AssemblyInput` gathered from its sources: the prompts folder (system
 * prompt and reminder, re-read on every request, with loading warnings) and the files in
 * context. The session engine and the CLI both gather their input here.
 */
import { Effect } from "effect"
import { RepoFiles, type ContextFile } from "../context/FileContext.ts"
import { Prompts } from "../prompts/Prompts.ts"
import type { ImagePart } from "../domain/Message.ts"
import type { AssemblyInput, UrlContent } from "../pipeline/base/state.ts"

/** What a caller adds for one request besides its files and history. */
export interface RequestParts {
  /** The user's prompt (the system reminder is appended by assembly). */
  readonly prompt: string
  readonly images?: ReadonlyArray<string | ImagePart>
  /** Fetched URL contents, formatted for the prompt; at most 3 are used. */
  readonly urls?: ReadonlyArray<UrlContent>
  /** Code review context (review mode). */
  readonly review?: string
  /** Include the symbol map and file tree (default true). */
  readonly useRepoMap?: boolean
}

/** What a request brings besides the prompts folder: model, prompt, files, and history when the caller keeps it. */
export interface RequestSources extends RequestParts {
  readonly model: string
  /** The files in context, already read. */
  readonly files: ReadonlyArray<ContextFile>
  /** The conversation so far (absent when the turn takes it from the store). */
  readonly history?: AssemblyInput["history"]
}

/**
 * The request's input with the prompts folder's system prompt and reminder, and the
 * warnings loading them produced (a missing or unreadable prompt file falls back to the default).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Prompts, requestInput } from "@strata/core/effect"
 * const program = requestInput({ model: "gpt-4o", prompt: "Hi", files: [] }).pipe(Effect.provide(Prompts.layer()))
 * Effect.runPromise(program).then(({ input }) => console.log(input.systemPrompt.length > 0)) // logs true: the bundled prompt
 * ```
 */
export const requestInput = Effect.fnUntraced(function* (request: RequestSources) {
  const prompts = yield* Prompts
  const system = yield* prompts.systemPrompt
  const reminder = yield* prompts.systemReminder
  const input: AssemblyInput = {
    model: request.model,
    prompt: request.prompt,
    systemPrompt: system.text,
    systemReminder: reminder.text,
    files: request.files,
    ...(request.history === undefined ? {} : { history: request.history }),
    ...(request.images === undefined ? {} : { images: request.images }),
    ...(request.urls === undefined ? {} : { urls: request.urls }),
    ...(request.review === undefined ? {} : { review: request.review }),
    ...(request.useRepoMap === undefined ? {} : { useRepoMap: request.useRepoMap })
  }
  return { input, warnings: [...system.warnings, ...reminder.warnings] }
})

/**
 * `requestInput` with the selected files read through `RepoFiles` (inside the repository,
 * text only, within the size limit; a file that fails fails the request with its `FileError`).
 *
 * @example
 * ```ts no-run
 * import { selectedFilesInput } from "@strata/core/effect"
 * const gathered = selectedFilesInput({ model: "gpt-4o", prompt: "Explain this", selected: ["src/index.ts"] })
 * // needs Prompts and RepoFiles: { input, warnings }
 * ```
 */
export const selectedFilesInput = Effect.fnUntraced(function* (request: Omit<RequestSources, "files"> & { readonly selected: ReadonlyArray<string> }) {
  const repoFiles = yield* RepoFiles
  const files: Array<ContextFile> = []
  for (const path of request.selected) files.push(yield* repoFiles.read(path))
  return yield* requestInput({ ...request, files })
})
