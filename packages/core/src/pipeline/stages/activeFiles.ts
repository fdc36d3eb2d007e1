/**
 * Stage 1, `activeFiles`: the files selected into context, whose full content this
 * request carries (and whose symbol blocks it therefore leaves out everywhere).
 */
import { Context, Effect, Layer } from "effect"
import { formatFile } from "../../assembly/headers.ts"
import { ItemKeys } from "../../domain/Item.ts"
import { sha256 } from "../../tokens/TokenCounter.ts"
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
      const files = selectedFiles(state.input.files ?? []).map(({ path, content }): FileEntry => {
        const text = formatFile(path, content)
        return { path, content, key: ItemKeys.file(path), hash: sha256(content), text, tokens: state.counter.count(text) }
      })
      return { ...state, files }
    })
}

/** Selected files with normalized paths, without duplicates (the last one given wins), sorted by path. */
export const selectedFiles = (files: ReadonlyArray<FileContent>): ReadonlyArray<FileContent> => {
  const byPath = new Map<string, string>()
  for (const f of files) byPath.set(normalizePath(f.path), f.content)
  return [...byPath.keys()].sort().map((path) => ({ path, content: byPath.get(path) ?? "" }))
}
