/**
 * The files in a conversation's context (docs/promise-api.md, files). `FileContext` is
 * an immutable value keyed by repo-relative, forward-slash paths; `RepoFiles` is the
 * Effect service that resolves user paths against the repository root and reads files
 * from disk, refusing paths outside the root, binary files and oversize files.
 */
import { constants, open, stat } from "node:fs/promises"
import * as NodePath from "node:path"
import { Context, Effect, Layer } from "effect"
import { BinaryFile, FileNotFound, FileReadError, FileTooLarge, PathOutsideRepo, SpecialFile, type InvalidInput } from "../domain/errors.ts"
import { normalizeRepoPath, resolveInsideRepoSync, specialKind } from "../files/insideRepo.ts"
import { FILES_ACTIVE_HEADER, formatFile, formatFiles } from "../assembly/headers.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"

/** Files over this many bytes are refused unless the limit is raised (1 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024

/** One file in context. */
export interface ContextFile {
  readonly path: string
  readonly content: string
}

interface Entry {
  readonly content: string
  /**
   * The file's fenced block, built once per content: counting the same string object
   * again is a memo hit without hashing (see `TokenCounter`).
   */
  readonly block: string
}

const entry = (path: string, content: string): Entry => ({ content, block: formatFile(path, content) })

/**
 * The files in context: an immutable map from repo-relative path to content. Every
 * "mutating" method returns a new `FileContext`. Paths are expected normalized (use
 * `normalizeRepoPath`, or let `ContextManager` do it).
 *
 * @example
 * ```ts
 * import { FileContext } from "@strata/core"
 * const files = FileContext.empty.addFile("src/b.ts", "b").addFile("src/a.ts", "a")
 * files.getFiles() // ["src/a.ts", "src/b.ts"]
 * files.formatForPrompt() // "src/a.ts\n```\na\n```\n\nsrc/b.ts\n```\nb\n```"
 * ```
 */
export class FileContext {
  static readonly empty: FileContext = new FileContext(new Map())

  /** A context holding `files` (later entries win for a repeated path). */
  static of(files: Iterable<ContextFile>): FileContext {
    const map = new Map<string, Entry>()
    for (const f of files) map.set(f.path, entry(f.path, f.content))
    return new FileContext(map)
  }

  private sortedPaths: ReadonlyArray<string> | undefined
  private readonly files: ReadonlyMap<string, Entry>

  private constructor(files: ReadonlyMap<string, Entry>) {
    this.files = files
  }

  /** Number of files. */
  get size(): number {
    return this.files.size
  }

  /** Add or replace a file. */
  addFile(path: string, content: string): FileContext {
    if (this.files.get(path)?.content === content) return this
    const next = new Map(this.files)
    next.set(path, entry(path, content))
    return new FileContext(next)
  }

  /** Remove a file; returns this context unchanged when the file is not in it. */
  removeFile(path: string): FileContext {
    if (!this.files.has(path)) return this
    const next = new Map(this.files)
    next.delete(path)
    return new FileContext(next)
  }

  /** Paths in context, sorted (code-unit order, so the order never depends on locale). */
  getFiles(): ReadonlyArray<string> {
    this.sortedPaths ??= [...this.files.keys()].sort()
    return this.sortedPaths
  }

  getContent(path: string): string | undefined {
    return this.files.get(path)?.content
  }

  hasFile(path: string): boolean {
    return this.files.has(path)
  }

  clear(): FileContext {
    return this.files.size === 0 ? this : FileContext.empty
  }

  /** Files with their content, in path order. */
  entries(): ReadonlyArray<ContextFile> {
    return this.getFiles().map((path) => ({ path, content: this.files.get(path)!.content }))
  }

  /**
   * All files as fenced blocks (path line, fence, content, fence; no language tag),
   * joined by a blank line; `header` goes first when there is at least one file.
   */
  formatForPrompt(header = ""): string {
    return formatFiles(this.entries(), header)
  }

  /** Tokens of each file's fenced block, by path. */
  getTokensByFile(counter: Pick<TokenCounter, "count">): ReadonlyMap<string, number> {
    const out = new Map<string, number>()
    for (const path of this.getFiles()) out.set(path, counter.count(this.files.get(path)!.block))
    return out
  }

  /** Total tokens across files (the sum of `getTokensByFile`). */
  countTokens(counter: Pick<TokenCounter, "count">): number {
    let total = 0
    for (const n of this.getTokensByFile(counter).values()) total += n
    return total
  }
}

/** The Working Files section text for a context, or `""` when it holds no files. */
export const formatWorkingFiles = (files: FileContext): string => files.formatForPrompt(FILES_ACTIVE_HEADER)

/** Everything that can go wrong reading a repository file. */
export type FileError = PathOutsideRepo | InvalidInput | FileNotFound | FileTooLarge | BinaryFile | SpecialFile | FileReadError

/**
 * Where the first NUL byte is, or -1: a file with one anywhere is binary. The whole file
 * is scanned (a fast byte search), so a NUL after the first 8 KiB is never sent as text.
 */
export const firstNulOffset = (bytes: Uint8Array): number => bytes.indexOf(0)

/** True when `bytes` holds a NUL byte anywhere. */
export const looksBinary = (bytes: Uint8Array): boolean => firstNulOffset(bytes) !== -1

const utf8 = new TextDecoder("utf-8", { fatal: false })

/** UTF-8 text of `bytes`; invalid sequences become U+FFFD instead of failing. */
export const decodeUtf8 = (bytes: Uint8Array): string => utf8.decode(bytes)

export interface RepoFilesOptions {
  /** The repository root; relative paths are resolved against it. */
  readonly root: string
  /** Largest file `read` accepts, in bytes. Default 1 MiB. */
  readonly maxFileBytes?: number | undefined
}

const errnoCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error))

// Open without blocking (a FIFO swapped in after the type check must not hang the read)
// and without following a link (the path was already resolved and checked).
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0)

const make = (options: RepoFilesOptions) => {
  const root = NodePath.resolve(options.root)
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES

  const normalize = (path: string): Effect.Effect<string, PathOutsideRepo | InvalidInput> =>
    Effect.fromResult(normalizeRepoPath(root, path))

  /** The file's real path, checked: inside the repository (links included) and a regular file. */
  const resolveReal = (path: string, relative: string) =>
    Effect.tryPromise({
      try: async () => {
        const resolved = resolveInsideRepoSync(root, relative)
        if (!resolved.exists) throw Object.assign(new Error("missing"), { code: "ENOENT" })
        // The type is checked before open(): opening a FIFO would wait for a writer.
        const info = await stat(resolved.real)
        if (info.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" })
        if (!info.isFile()) throw new SpecialFile({ path: relative, kind: specialKind(info) })
        return resolved.real
      },
      catch: (error): PathOutsideRepo | SpecialFile | FileNotFound | FileReadError => {
        if (error instanceof PathOutsideRepo) return new PathOutsideRepo({ path, root, ...(error.link === undefined ? {} : { link: error.link }) })
        if (error instanceof SpecialFile) return error
        const code = errnoCode(error)
        return code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR"
          ? new FileNotFound({ path: relative })
          : new FileReadError({ path: relative, reason: reason(error) })
      }
    })

  const readBytes = (relative: string, real: string) =>
    Effect.acquireUseRelease(
      Effect.tryPromise({ try: () => open(real, READ_FLAGS), catch: (error) => new FileReadError({ path: relative, reason: reason(error) }) }),
      (handle) =>
        Effect.gen(function* () {
          const info = yield* Effect.tryPromise({
            try: () => handle.stat(),
            catch: (error) => new FileReadError({ path: relative, reason: reason(error) })
          })
          if (info.isDirectory()) return yield* new FileNotFound({ path: relative })
          if (!info.isFile()) return yield* new SpecialFile({ path: relative, kind: specialKind(info) })
          if (info.size > maxFileBytes) return yield* new FileTooLarge({ path: relative, size: info.size, limit: maxFileBytes })
          // Read at most one byte past the limit: the file may have grown since stat.
          const buffer = new Uint8Array(Math.min(info.size, maxFileBytes) + 1)
          let filled = 0
          while (filled < buffer.length) {
            const { bytesRead } = yield* Effect.tryPromise({
              try: () => handle.read(buffer, filled, buffer.length - filled, filled),
              catch: (error) => new FileReadError({ path: relative, reason: reason(error) })
            })
            if (bytesRead === 0) break
            filled += bytesRead
          }
          if (filled > maxFileBytes) {
            return yield* new FileTooLarge({ path: relative, size: Math.max(info.size, filled), limit: maxFileBytes })
          }
          return buffer.subarray(0, filled)
        }),
      (handle) => Effect.promise(() => handle.close()).pipe(Effect.ignore)
    )

  const read = Effect.fnUntraced(function* (path: string) {
    const relative = yield* normalize(path)
    // The lexical check passed; a symlink may still lead out of the repository.
    const real = yield* resolveReal(path, relative)
    const bytes = yield* readBytes(relative, real)
    const nul = firstNulOffset(bytes)
    if (nul !== -1) return yield* new BinaryFile({ path: relative, offset: nul })
    return { path: relative, content: decodeUtf8(bytes) } satisfies ContextFile
  })

  return { root, maxFileBytes, normalize, read }
}

/**
 * Reads repository files for the context: resolves paths against the root, refuses
 * paths that lead outside it (`..`, absolute paths elsewhere, symlinks out), binary
 * files and files over the size limit, and decodes text as UTF-8 with replacement.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RepoFiles } from "@strata/core/effect"
 * const program = Effect.gen(function* () {
 *   const files = yield* RepoFiles
 *   return yield* files.read("src/index.ts") // { path: "src/index.ts", content: "..." }
 * }).pipe(Effect.provide(RepoFiles.layer({ root: "/path/to/repo" })))
 * ```
 */
export class RepoFiles extends Context.Service<RepoFiles, {
  /** The absolute repository root. */
  readonly root: string
  readonly maxFileBytes: number
  /** The repo-relative, forward-slash form of a path, checked lexically (no disk access). */
  readonly normalize: (path: string) => Effect.Effect<string, PathOutsideRepo | InvalidInput>
  /** Read a text file from the repository. */
  readonly read: (path: string) => Effect.Effect<ContextFile, FileError>
}>()("@strata/core/RepoFiles") {
  static readonly layer = (options: RepoFilesOptions): Layer.Layer<RepoFiles> => Layer.sync(RepoFiles, () => make(options))
}
