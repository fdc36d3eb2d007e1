/**
 * Safe file access inside a repository, for everything Strata reads or writes there
 * (`.strata/` state, prompts, files put in context). A path resolves inside the
 * repository's real root or is refused with `PathOutsideRepo` (`..`, absolute paths
 * elsewhere, a symbolic link that leads out at any level); only regular files are read,
 * opened without blocking (a FIFO would wait forever for a writer); and a write goes to
 * a temporary file created with O_EXCL|O_NOFOLLOW in the real directory, then renamed
 * over the target, so it never writes through a link.
 */
import * as nodeFs from "node:fs"
import * as fsp from "node:fs/promises"
import * as NodePath from "node:path"
import { Effect, Result } from "effect"
import { FileReadError, FileWriteError, InvalidInput, PathOutsideRepo, SpecialFile, type SpecialFileKind } from "../domain/errors.ts"

// Absent on Windows, where links need privileges to create: there the flags are no-ops.
const O_NOFOLLOW = nodeFs.constants.O_NOFOLLOW ?? 0
const O_NONBLOCK = nodeFs.constants.O_NONBLOCK ?? 0
const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_APPEND } = nodeFs.constants

// C0 and C1 controls, DEL, and the Unicode line and paragraph separators: a file name
// holding one would start a new line (or worse) wherever the name is printed in a
// prompt, and could fake its structure.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_NAME_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u

/**
 * The first character of `path` Strata refuses in a file name (a control character or
 * a line separator), as `U+000A`; undefined when the name is safe to print in a prompt.
 *
 * @example
 * ```ts
 * import { unsafeNameCharacter } from "@strata/core"
 * unsafeNameCharacter("src/a.ts") // undefined
 * unsafeNameCharacter("src/a\nb.ts") // "U+000A"
 * ```
 */
export const unsafeNameCharacter = (path: string): string | undefined => {
  const found = UNSAFE_NAME_CHARACTER.exec(path)?.[0]
  return found === undefined ? undefined : `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`
}

const isOutside = (relative: string): boolean =>
  relative === ".." || relative.startsWith(`..${NodePath.sep}`) || relative.startsWith("../") || NodePath.isAbsolute(relative)

/** True when the absolute path `inner` is `root` itself or lies below it (lexically). */
export const isWithin = (root: string, inner: string): boolean => !isOutside(NodePath.relative(root, inner))

/**
 * Resolve a user-given path against the repository root, lexically (no disk access):
 * relative paths are taken from the root, absolute ones must lie inside it, `\` is
 * read as `/`. Returns the repo-relative path with forward slashes. Names with control
 * characters or line separators are refused (`InvalidInput`): they could fake the
 * structure of a prompt they are printed in.
 *
 * @example
 * ```ts
 * import { normalizeRepoPath } from "@strata/core"
 * normalizeRepoPath("/repo", "./src\\a.ts") // Result.succeed("src/a.ts")
 * normalizeRepoPath("/repo", "../etc/passwd") // Result.fail(PathOutsideRepo)
 * ```
 */
export const normalizeRepoPath = (
  root: string,
  path: string
): Result.Result<string, PathOutsideRepo | InvalidInput> => {
  if (path.trim() === "") return Result.fail(new InvalidInput({ what: "path", issue: "the path is empty" }))
  if (path.includes("\0")) return Result.fail(new InvalidInput({ what: "path", issue: `${JSON.stringify(path)} contains a NUL byte` }))
  const unsafe = unsafeNameCharacter(path)
  if (unsafe !== undefined) {
    return Result.fail(new InvalidInput({
      what: "path",
      issue: `${JSON.stringify(path)} contains the control character ${unsafe}; Strata refuses such file names because they could fake the structure of a prompt. Rename the file.`
    }))
  }
  const absoluteRoot = NodePath.resolve(root)
  const slashed = path.replaceAll("\\", "/")
  const absolute = NodePath.resolve(absoluteRoot, slashed)
  const relative = NodePath.relative(absoluteRoot, absolute).split(NodePath.sep).join("/")
  if (relative === "") {
    return Result.fail(new InvalidInput({ what: "path", issue: `${JSON.stringify(path)} names the repository root, not a file` }))
  }
  if (isOutside(relative)) return Result.fail(new PathOutsideRepo({ path, root: absoluteRoot }))
  return Result.succeed(relative)
}

const errnoCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The kind of a non-regular file, for `SpecialFile`. */
export const specialKind = (stat: nodeFs.Stats): SpecialFileKind =>
  stat.isFIFO()
    ? "FIFO"
    : stat.isSocket()
      ? "socket"
      : stat.isCharacterDevice()
        ? "character device"
        : stat.isBlockDevice()
          ? "block device"
          : stat.isDirectory()
            ? "directory"
            : "unknown"

/** Where a checked path lives on disk. */
export interface ResolvedPath {
  /** The repository root, symlinks resolved. */
  readonly realRoot: string
  /** The path as given, relative to the root, for messages. */
  readonly relative: string
  /** The absolute path in the real tree: no link left in it (links were resolved and checked). */
  readonly real: string
  /** Whether something exists there. */
  readonly exists: boolean
}

/** Thrown by the resolvers for anything but a refusal (an I/O error); carries the errno code. */
class ResolveFailure extends Error {
  readonly code: string | undefined
  readonly path: string
  constructor(path: string, cause: unknown) {
    super(reasonOf(cause))
    this.path = path
    this.code = errnoCode(cause)
  }
}

/**
 * The metadata calls path resolution makes, synchronous. `node:fs` by default; the
 * symbol index passes its own file-system seam (tests inject failures through it).
 */
export interface PathFileSystem {
  lstat(path: string): { isSymbolicLink(): boolean; isDirectory(): boolean }
  realpath(path: string): string
  /** Create one directory (its parent exists). */
  mkdir(path: string): void
  /** A link's target as written; optional (used to judge dangling links). */
  readlink?(path: string): string
}

const nodePathFs: PathFileSystem = {
  lstat: (p) => nodeFs.lstatSync(p),
  realpath: (p) => nodeFs.realpathSync(p),
  mkdir: (p) => nodeFs.mkdirSync(p),
  readlink: (p) => nodeFs.readlinkSync(p)
}

/** The real root, or an error naming it. */
const realRootOf = (root: string, fs: PathFileSystem = nodePathFs): string => {
  try {
    return fs.realpath(NodePath.resolve(root))
  } catch (error) {
    throw new ResolveFailure(root, error)
  }
}

/** The repo-relative form of `path` (relative to `root`, or absolute under `root` or its real path). */
const relativeOf = (root: string, realRoot: string, path: string): string | PathOutsideRepo => {
  const absoluteRoot = NodePath.resolve(root)
  const absolute = NodePath.resolve(absoluteRoot, path)
  for (const base of [absoluteRoot, realRoot]) {
    const relative = NodePath.relative(base, absolute)
    if (!isOutside(relative)) return relative
  }
  return new PathOutsideRepo({ path, root: absoluteRoot })
}

/**
 * Walk `path` under the root one component at a time. Each existing link is resolved
 * and must stay inside the real root; missing directories are created one level at a
 * time inside their real parent when `create` is set (never through a link).
 * Synchronous on purpose: metadata calls only, and nothing can move between them
 * through an `await`.
 */
const resolveSync = (root: string, path: string, create: boolean, fs: PathFileSystem = nodePathFs): ResolvedPath => {
  let realRoot: string
  try {
    realRoot = realRootOf(root, fs)
  } catch (error) {
    // Nothing exists below a root that does not exist; a write needs the root, though.
    if (create || !(error instanceof ResolveFailure) || error.code !== "ENOENT") throw error
    const absoluteRoot = NodePath.resolve(root)
    const relative = relativeOf(root, absoluteRoot, path)
    if (relative instanceof PathOutsideRepo) throw relative
    return { realRoot: absoluteRoot, relative, real: NodePath.join(absoluteRoot, relative), exists: false }
  }
  const relative = relativeOf(root, realRoot, path)
  if (relative instanceof PathOutsideRepo) throw relative
  const parts = relative.split(NodePath.sep).filter((p) => p !== "" && p !== ".")
  let current = realRoot
  const refuse = (link: string, target: string) =>
    new PathOutsideRepo({ path, root: realRoot, link: `${NodePath.relative(realRoot, link) || "."} -> ${target}` })
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1
    const next = NodePath.join(current, part)
    let stat: ReturnType<PathFileSystem["lstat"]> | undefined
    try {
      stat = fs.lstat(next)
    } catch (error) {
      if (errnoCode(error) !== "ENOENT") throw new ResolveFailure(path, error)
    }
    if (stat === undefined) {
      if (last) return { realRoot, relative, real: next, exists: false }
      if (!create) return { realRoot, relative, real: NodePath.join(next, ...parts.slice(i + 1)), exists: false }
      try {
        fs.mkdir(next)
      } catch (error) {
        // Created meanwhile by another process: look at it again (it may be a link now).
        if (errnoCode(error) !== "EEXIST") throw new ResolveFailure(path, error)
        return resolveSync(root, path, create, fs)
      }
      current = next
      continue
    }
    if (stat.isSymbolicLink()) {
      let target: string
      try {
        target = fs.realpath(next)
      } catch (error) {
        // A dangling link: where it points, read without following further.
        const pointed = (() => {
          try {
            return fs.readlink === undefined ? undefined : NodePath.resolve(current, fs.readlink(next))
          } catch {
            return undefined
          }
        })()
        if (pointed !== undefined && !isWithin(realRoot, pointed)) throw refuse(next, pointed)
        if (errnoCode(error) === "ENOENT" && last) return { realRoot, relative, real: next, exists: false }
        throw new ResolveFailure(path, error)
      }
      if (!isWithin(realRoot, target)) throw refuse(next, target)
      if (last) return { realRoot, relative, real: target, exists: true }
      current = target
      continue
    }
    if (last) return { realRoot, relative, real: next, exists: true }
    if (!stat.isDirectory()) {
      // A file where a directory was expected: nothing can exist below it.
      if (!create) return { realRoot, relative, real: NodePath.join(next, ...parts.slice(i + 1)), exists: false }
      throw new ResolveFailure(path, Object.assign(new Error(`${NodePath.join(...parts.slice(0, i + 1))} is not a directory`), { code: "ENOTDIR" }))
    }
    current = next
  }
  return { realRoot, relative, real: current, exists: true }
}

/**
 * Check where `path` (relative to `root`, or absolute inside it) lands on disk. Throws
 * `PathOutsideRepo` when it or a link on the way leaves the repository; other failures
 * throw an `Error` with the errno `code`. With `create`, missing parent directories are
 * made one at a time inside their real parent (for a write that follows); `fs` replaces
 * `node:fs` for the metadata calls.
 *
 * @example
 * ```ts
 * import { resolveInsideRepoSync } from "@strata/core"
 * resolveInsideRepoSync("/repo", ".strata/tracker.json").real // "/repo/.strata/tracker.json"
 * ```
 */
export const resolveInsideRepoSync = (
  root: string,
  path: string,
  options: { readonly create?: boolean; readonly fs?: PathFileSystem } = {}
): ResolvedPath => resolveSync(root, path, options.create === true, options.fs)

/**
 * Read a regular file inside the repository: the bytes, or undefined when it does not
 * exist. Throws `PathOutsideRepo`, `SpecialFile`, or an `Error` with the errno `code`.
 * Synchronous, for callers that index thousands of files (the symbol map).
 */
export const readInsideRepoSync = (root: string, path: string): Buffer | undefined => {
  const resolved = resolveSync(root, path, false)
  if (!resolved.exists) return undefined
  let fd: number
  try {
    fd = nodeFs.openSync(resolved.real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined
    throw new ResolveFailure(path, error)
  }
  try {
    const stat = nodeFs.fstatSync(fd)
    if (!stat.isFile()) throw new SpecialFile({ path: resolved.relative.split(NodePath.sep).join("/"), kind: specialKind(stat) })
    return nodeFs.readFileSync(fd)
  } finally {
    nodeFs.closeSync(fd)
  }
}

let temporaries = 0
/** A temporary name next to `real`, unique in this process and across processes. */
const temporaryName = (real: string): string =>
  NodePath.join(NodePath.dirname(real), `.${NodePath.basename(real)}.${process.pid}.${++temporaries}.${Math.random().toString(36).slice(2, 8)}.tmp`)

/**
 * Replace a file inside the repository atomically: a temporary file created exclusively
 * (never through a link) in the target's real directory, written (and synced when
 * `sync`), then renamed over the target. Missing parent directories are created inside
 * the repository. Throws like `readInsideRepoSync`.
 */
export const writeInsideRepoSync = (root: string, path: string, data: string | Uint8Array, options: { readonly sync?: boolean } = {}): void => {
  const resolved = resolveSync(root, path, true)
  const temporary = temporaryName(resolved.real)
  let fd: number | undefined
  try {
    fd = nodeFs.openSync(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666)
    nodeFs.writeFileSync(fd, data)
    if (options.sync === true) nodeFs.fsyncSync(fd)
    nodeFs.closeSync(fd)
    fd = undefined
    nodeFs.renameSync(temporary, resolved.real)
  } catch (error) {
    if (fd !== undefined) nodeFs.closeSync(fd)
    nodeFs.rmSync(temporary, { force: true })
    throw error instanceof ResolveFailure ? error : new ResolveFailure(path, error)
  }
}

// --- Effect API ---------------------------------------------------------------------

/** Everything reading inside the repository can fail with. */
export type ReadInsideRepoError = PathOutsideRepo | SpecialFile | FileReadError
/** Everything writing inside the repository can fail with. */
export type WriteInsideRepoError = PathOutsideRepo | FileWriteError

const slashed = (path: string): string => path.split(NodePath.sep).join("/")

const asReadError = (path: string) => (error: unknown): ReadInsideRepoError =>
  error instanceof PathOutsideRepo || error instanceof SpecialFile ? error : new FileReadError({ path: slashed(path), reason: reasonOf(error) })

const asWriteError = (path: string) => (error: unknown): WriteInsideRepoError =>
  error instanceof PathOutsideRepo ? error : new FileWriteError({ path: slashed(path), reason: reasonOf(error) })

/** Open a resolved regular file for reading without blocking on a FIFO, and check its type. */
const openRegular = async (resolved: ResolvedPath): Promise<fsp.FileHandle | undefined> => {
  let handle: fsp.FileHandle
  try {
    handle = await fsp.open(resolved.real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined
    throw error
  }
  try {
    const stat = await handle.stat()
    if (!stat.isFile()) throw new SpecialFile({ path: slashed(resolved.relative), kind: specialKind(stat) })
    return handle
  } catch (error) {
    await handle.close()
    throw error
  }
}

/**
 * The text of a regular file inside the repository (UTF-8), or undefined when it does
 * not exist. Fails with `PathOutsideRepo` when the path or a link on its way leads out of
 * the repository, `SpecialFile` for a FIFO, socket, device or directory, and
 * `FileReadError` for anything else.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { readInsideRepo } from "@strata/core"
 * const text = await Effect.runPromise(readInsideRepo(".", ".strata/config.json")) // string | undefined
 * ```
 */
export const readInsideRepo = (root: string, path: string): Effect.Effect<string | undefined, ReadInsideRepoError> =>
  Effect.tryPromise({
    try: async () => {
      const resolved = resolveSync(root, path, false)
      const handle = resolved.exists ? await openRegular(resolved) : undefined
      if (handle === undefined) return undefined
      try {
        return await handle.readFile("utf8")
      } finally {
        await handle.close()
      }
    },
    catch: asReadError(path)
  })

/**
 * Replace a file inside the repository atomically (temporary file in the real
 * directory, created with O_EXCL|O_NOFOLLOW, then renamed; `sync` also fsyncs it before
 * the rename). A link on the way that leads out of the repository fails with
 * `PathOutsideRepo`; nothing is ever written through a link.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { writeInsideRepo } from "@strata/core"
 * await Effect.runPromise(writeInsideRepo(".", ".strata/notes.json", "{}\n"))
 * ```
 */
export const writeInsideRepo = (
  root: string,
  path: string,
  data: string | Uint8Array,
  options: { readonly sync?: boolean } = {}
): Effect.Effect<void, WriteInsideRepoError> =>
  Effect.tryPromise({
    try: async () => {
      const resolved = resolveSync(root, path, true)
      const temporary = temporaryName(resolved.real)
      try {
        const handle = await fsp.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666)
        try {
          await handle.writeFile(data)
          if (options.sync === true) await handle.sync()
        } finally {
          await handle.close()
        }
        await fsp.rename(temporary, resolved.real)
      } catch (error) {
        await fsp.rm(temporary, { force: true })
        throw error
      }
    },
    catch: asWriteError(path)
  })

/**
 * Create a file inside the repository only if nothing exists there (O_EXCL, never
 * through a link). Succeeds with `false` when the path is taken.
 */
export const createInsideRepo = (root: string, path: string, data: string | Uint8Array = ""): Effect.Effect<boolean, WriteInsideRepoError> =>
  Effect.tryPromise({
    try: async () => {
      const resolved = resolveSync(root, path, true)
      if (resolved.exists) return false
      let handle: fsp.FileHandle
      try {
        handle = await fsp.open(resolved.real, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666)
      } catch (error) {
        if (errnoCode(error) === "EEXIST") return false
        throw error
      }
      try {
        await handle.writeFile(data)
      } finally {
        await handle.close()
      }
      return true
    },
    catch: asWriteError(path)
  })

/**
 * Run `use` with a handle on a regular file inside the repository opened for reading
 * and appending (created when missing), never through a link; the handle is closed
 * afterwards. For append-only logs such as the history files.
 */
export const appendInsideRepo = <A>(
  root: string,
  path: string,
  use: (handle: fsp.FileHandle) => Promise<A>
): Effect.Effect<A, WriteInsideRepoError | SpecialFile> =>
  Effect.tryPromise({
    try: async () => {
      const resolved = resolveSync(root, path, true)
      const handle = await fsp.open(resolved.real, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o666)
      try {
        const stat = await handle.stat()
        if (!stat.isFile()) throw new SpecialFile({ path: slashed(resolved.relative), kind: specialKind(stat) })
        return await use(handle)
      } finally {
        await handle.close()
      }
    },
    catch: (error) => (error instanceof SpecialFile ? error : asWriteError(path)(error))
  })

/**
 * The names in a directory inside the repository (empty when it does not exist), after
 * checking that the directory resolves inside it.
 */
export const listInsideRepo = (root: string, path: string): Effect.Effect<ReadonlyArray<string>, ReadInsideRepoError> =>
  Effect.tryPromise({
    try: async () => {
      const resolved = resolveSync(root, path, false)
      if (!resolved.exists) return []
      return await fsp.readdir(resolved.real)
    },
    catch: asReadError(path)
  })

/** Metadata of a file inside the repository (links resolved and checked), or undefined when missing. */
export const statInsideRepo = (root: string, path: string): Effect.Effect<nodeFs.Stats | undefined, ReadInsideRepoError> =>
  Effect.tryPromise({
    try: async () => {
      const resolved = resolveSync(root, path, false)
      if (!resolved.exists) return undefined
      return await fsp.stat(resolved.real).catch((error: unknown) => (errnoCode(error) === "ENOENT" ? undefined : Promise.reject(error)))
    },
    catch: asReadError(path)
  })

/** Delete a file inside the repository (the link itself when it is one); missing is fine. */
export const removeInsideRepo = (root: string, path: string): Effect.Effect<void, WriteInsideRepoError> =>
  Effect.tryPromise({
    try: async () => {
      const realRoot = realRootOf(root)
      const relative = relativeOf(root, realRoot, path)
      if (relative instanceof PathOutsideRepo) throw relative
      // The parent must resolve inside; the entry itself is unlinked, never followed.
      const parent = resolveSync(root, NodePath.dirname(relative), false)
      if (!parent.exists) return
      await fsp.unlink(NodePath.join(parent.real, NodePath.basename(relative))).catch((error: unknown) =>
        errnoCode(error) === "ENOENT" ? undefined : Promise.reject(error))
    },
    catch: asWriteError(path)
  })

/**
 * Whether `root` is a bare git repository (or a `.git` folder): `HEAD`, `objects/` and
 * `refs/` at its top, as git itself decides. Such a folder has no work tree; listing it
 * would show git's own files (`HEAD`, `hooks/...`) as the repository's. `fs` replaces
 * `node:fs` (the symbol index passes its own seam).
 *
 * @example
 * ```ts no-run
 * import { isBareRepository } from "@strata/core"
 * isBareRepository("/srv/git/project.git") // true
 * ```
 */
export const isBareRepository = (
  root: string,
  fs: { stat(path: string): { isFile(): boolean; isDirectory(): boolean } } = { stat: (p) => nodeFs.statSync(p) }
): boolean => {
  try {
    return fs.stat(NodePath.join(root, "HEAD")).isFile() && fs.stat(NodePath.join(root, "objects")).isDirectory() && fs.stat(NodePath.join(root, "refs")).isDirectory()
  } catch {
    return false
  }
}

/** The message for a bare repository given as a work tree. */
export const BARE_REPOSITORY_REASON = "is a bare git repository (or a .git folder): it has no work tree to read files from; pass the path of a checkout"

/** How many numbered copies `keepDamagedCopy` tries before giving up. */
const MAX_COPIES = 1000

/**
 * Keep a copy of a damaged file's text next to it as `<path>.bad.<n>`, with the first
 * free `n` from 1, so a second damaged file never overwrites the first copy. Returns the
 * copy's path, in the form `path` was given.
 *
 * @example
 * ```ts no-run
 * import { Effect } from "effect"
 * import { keepDamagedCopy } from "@strata/core"
 * await Effect.runPromise(keepDamagedCopy(".", ".strata/tracker.json", "{ not json")) // ".strata/tracker.json.bad.1"
 * ```
 */
export const keepDamagedCopy = (root: string, path: string, text: string | Uint8Array): Effect.Effect<string, WriteInsideRepoError> =>
  Effect.gen(function* () {
    for (let n = 1; n <= MAX_COPIES; n++) {
      const copy = `${path}.bad.${n}`
      if (yield* createInsideRepo(root, copy, text)) return copy
    }
    return yield* new FileWriteError({ path: slashed(path), reason: `${MAX_COPIES} damaged copies exist already; delete old ${path}.bad.* files` })
  })
