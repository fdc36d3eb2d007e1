/**
 * Stage 1, `activeFiles`: the files selected into context, whose full content this
 * request carries (and whose symbol blocks it therefore leaves out everywhere).
 */
import { Context, Effect, Layer } from "effect"
import { formatFile } from "../../assembly/headers.ts"
import { ItemKeys } from "../../domain/Item.ts"
import { sha256, type TokenCounter } from "../../tokens/TokenCounter.ts"
import type { FileEntry } from "../base/entries.ts"
import type { FileContent, Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(ActiveFilesStage, myStage)`. */
export class ActiveFilesStage extends Context.Service<ActiveFilesStage, Stage>()("@strata/core/pipeline/ActiveFiles") {
  static readonly layer: Layer.Layer<ActiveFilesStage> = Layer.sync(ActiveFilesStage, () => activeFiles)
}

/** A repo-relative path with forward slashes and no leading `./`. */
export const normalizePath = (path: string): string => path.replace(/\\/g, "/").replace(/^(\.\/)+/, "")

/**
 * Normalize paths, drop duplicates (the last content given wins) and sort by path, so
 * the same selection in any order renders the same bytes.
 */
export const activeFiles: Stage = {
  name: "activeFiles",
  run: (state) =>
    Effect.sync(() => {
      const files = fileEntries(selectedFiles(state.input.files ?? []), state.counter)
      return { ...state, files }
    })
}

/**
 * A session sends the same files again on most requests, read afresh each time: a file
 * unchanged since the last request (the same text under the same path, compared as
 * text) is the entry built then, not hashed, formatted and counted again. The memo
 * belongs to the token counter (the `Tokenizer` of an engine or a proxy): it holds the
 * entries of the counter's last request only, and goes when the counter does.
 */
const lastEntries = new WeakMap<TokenCounter, ReadonlyMap<string, FileEntry>>()

const fileEntries = (files: ReadonlyArray<FileContent>, counter: TokenCounter): ReadonlyArray<FileEntry> => {
  const previous = lastEntries.get(counter)
  const next = new Map<string, FileEntry>()
  const entries = files.map(({ path, content }): FileEntry => {
    const known = previous?.get(path)
    const entry = known !== undefined && known.content === content ? known : fileEntry(path, content, counter)
    next.set(path, entry)
    return entry
  })
  lastEntries.set(counter, next)
  return entries
}

const fileEntry = (path: string, content: string, counter: TokenCounter): FileEntry => {
  const text = formatFile(path, content)
  return { path, content, key: ItemKeys.file(path), hash: sha256(content), text, tokens: counter.count(text) }
}

/** Selected files with normalized paths, without duplicates (the last one given wins), sorted by path. */
export const selectedFiles = (files: ReadonlyArray<FileContent>): ReadonlyArray<FileContent> => {
  const byPath = new Map<string, string>()
  for (const f of files) byPath.set(normalizePath(f.path), f.content)
  return [...byPath.keys()].sort().map((path) => ({ path, content: byPath.get(path) ?? "" }))
}
