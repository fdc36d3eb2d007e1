/**
 * The repository's file list and safe reads of its files: git-tracked plus
 * untracked-not-ignored files when the root is in a git work tree, otherwise a walk
 * that honours `.gitignore` files. Symlink loops, links out of the root and
 * unreadable files are reported, never thrown.
 */
import { execFile, execFileSync } from "node:child_process"
import * as nodeFs from "node:fs"
import { join, relative, sep } from "node:path"
import { BARE_REPOSITORY_REASON, isBareRepository, unsafeNameCharacter } from "@strata/core"
import { IgnoreMatcher } from "./gitignore.ts"

/** A file or directory status (the subset of `fs.Stats` the index reads). */
export interface FileStat {
  readonly size: number
  readonly mtimeMs: number
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}

/** A directory entry. */
export interface DirEntry {
  readonly name: string
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}

/**
 * The file-system calls the index makes, synchronous because indexing thousands of
 * small files is fastest that way. `nodeFileSystem` is the real one; tests may wrap
 * it to inject failures no local account can produce (root reads everything).
 */
export interface FileSystem {
  stat(path: string): FileStat
  lstat(path: string): FileStat
  readFile(path: string): Buffer
  readdir(path: string): ReadonlyArray<DirEntry>
  realpath(path: string): string
  writeFile(path: string, data: string): void
  rename(from: string, to: string): void
  mkdir(path: string): void
  unlink(path: string): void
}

const O_NONBLOCK = nodeFs.constants.O_NONBLOCK ?? 0
const O_NOFOLLOW = nodeFs.constants.O_NOFOLLOW ?? 0

/** Thrown for a FIFO, socket or device: reading one would block or never end. */
const notRegular = (path: string): Error => Object.assign(new Error(`${path} is not a regular file`), { code: "ENOTREG" })

/**
 * Read a regular file. Opened without blocking (a FIFO has no writer and would wait
 * forever) and checked with fstat before any byte is read.
 */
const readRegularFile = (path: string): Buffer => {
  const fd = nodeFs.openSync(path, nodeFs.constants.O_RDONLY | O_NONBLOCK)
  try {
    const stat = nodeFs.fstatSync(fd)
    if (stat.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read`), { code: "EISDIR" })
    if (!stat.isFile()) throw notRegular(path)
    return nodeFs.readFileSync(fd)
  } finally {
    nodeFs.closeSync(fd)
  }
}

/** The node:fs implementation of `FileSystem`. */
export const nodeFileSystem: FileSystem = {
  stat: (p) => nodeFs.statSync(p),
  lstat: (p) => nodeFs.lstatSync(p),
  readFile: readRegularFile,
  readdir: (p) => nodeFs.readdirSync(p, { withFileTypes: true }),
  realpath: (p) => nodeFs.realpathSync(p),
  // Only temporary files are written (then renamed): created exclusively, never through a link.
  writeFile: (p, data) => {
    const fd = nodeFs.openSync(p, nodeFs.constants.O_WRONLY | nodeFs.constants.O_CREAT | nodeFs.constants.O_EXCL | O_NOFOLLOW, 0o666)
    try {
      nodeFs.writeFileSync(fd, data)
    } finally {
      nodeFs.closeSync(fd)
    }
  },
  rename: (from, to) => nodeFs.renameSync(from, to),
  mkdir: (p) => {
    nodeFs.mkdirSync(p, { recursive: true })
  },
  unlink: (p) => nodeFs.unlinkSync(p)
}

/** A file the index could not fully use, and why (same shape as core's `IndexProblem`). */
export interface Problem {
  readonly path: string
  readonly reason: string
}

/** The file list of a repository. */
export interface Listing {
  /** Repository-relative paths with `/` separators, sorted. */
  readonly files: ReadonlyArray<string>
  readonly problems: ReadonlyArray<Problem>
  /** How the list was made. */
  readonly source: "git" | "walk"
}

/** Options of `listFiles`. */
export interface ListOptions {
  /** Ask git first (default true); false always walks. */
  readonly git?: boolean
  /** Extra gitignore-style patterns applied when walking (default `["node_modules/"]`). */
  readonly walkIgnore?: ReadonlyArray<string>
  /** Directories never listed (default `[".git", ".strata"]`). */
  readonly alwaysIgnore?: ReadonlyArray<string>
}

const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : ""

/** A short, actionable reason for a file-system error. */
export const describeError = (error: unknown): string => {
  switch (errorCode(error)) {
    case "ELOOP":
      return "symlink loop"
    case "EACCES":
    case "EPERM":
      return "unreadable: permission denied"
    case "ENOENT":
      return "missing (a broken symlink or deleted while indexing)"
    case "EISDIR":
      return "is a directory"
    case "ENOTREG":
      return "not a regular file (a FIFO, socket or device); skipped"
    default:
      return error instanceof Error ? error.message : String(error)
  }
}

const GIT_ARGS = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]

const gitList = (root: string): ReadonlyArray<string> | undefined => {
  try {
    const out = execFileSync("git", ["-C", root, ...GIT_ARGS], { encoding: "utf8", maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] })
    return out.split("\0").filter((p) => p !== "")
  } catch {
    // Not a work tree, or no git at all: the caller walks instead.
    return undefined
  }
}

/**
 * `git ls-files --cached --others --exclude-standard` run asynchronously, so the
 * caller can stat files while git works; undefined outside a work tree or without
 * git. Paths are as git prints them (deleted tracked files included).
 */
export const gitLsFiles = (root: string): Promise<ReadonlyArray<string> | undefined> =>
  new Promise((resolvePromise) => {
    execFile("git", ["-C", root, ...GIT_ARGS], { encoding: "utf8", maxBuffer: 1 << 30 }, (error, stdout) => {
      resolvePromise(error === null ? stdout.split("\0").filter((p) => p !== "") : undefined)
    })
  })

/**
 * The directories git ignores as a whole (`git ls-files --others --ignored
 * --exclude-standard --directory`), each with a trailing slash; undefined outside git.
 */
export const gitIgnoredDirs = (root: string): Promise<ReadonlySet<string> | undefined> =>
  new Promise((resolvePromise) => {
    execFile("git", ["-C", root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], { encoding: "utf8", maxBuffer: 1 << 30 }, (error, stdout) => {
      resolvePromise(error === null ? new Set(stdout.split("\0").filter((p) => p.endsWith("/"))) : undefined)
    })
  })

/**
 * Every directory under `root` a new file could appear in: not `skip`ped by name,
 * not ignored, symlinks not followed. Relative paths ("" is the root).
 */
export const listDirectories = (root: string, fs: FileSystem, skip: ReadonlyArray<string>, ignored: (dir: string) => boolean): Array<string> => {
  const dirs: Array<string> = []
  const visit = (dir: string): void => {
    dirs.push(dir)
    let entries: ReadonlyArray<DirEntry>
    try {
      entries = fs.readdir(dir === "" ? root : `${root}/${dir}`)
    } catch {
      return
    }
    for (const e of entries) {
      if (!e.isDirectory() || skip.includes(e.name)) continue
      const child = dir === "" ? e.name : `${dir}/${e.name}`
      if (!ignored(child)) visit(child)
    }
  }
  visit("")
  return dirs
}

/** Whether `path` lies in one of the always-ignored directories (`.git`, `.strata`). */
export const inIgnoredDir = (path: string, always: ReadonlyArray<string>): boolean => isIgnoredDir(path, always)

const isIgnoredDir = (path: string, always: ReadonlyArray<string>): boolean =>
  always.some((d) => path === d || path.startsWith(`${d}/`) || path.includes(`/${d}/`) || path.endsWith(`/${d}`))

/**
 * Walk `root` for files, honouring `.gitignore` files and `options.walkIgnore`;
 * symlinked directories are followed unless they leave the root or loop (both
 * reported in `problems`).
 */
export const walkFiles = (root: string, fs: FileSystem, options: ListOptions, problems: Array<Problem>, dirs: Array<string> = []): Array<string> => {
  const files: Array<string> = []
  const matcher = new IgnoreMatcher()
  matcher.add((options.walkIgnore ?? ["node_modules/"]).join("\n"))
  const always = options.alwaysIgnore ?? [".git", ".strata"]
  const realRoot = safeRealpath(fs, root) ?? root
  const visit = (dir: string, chain: ReadonlySet<string>): void => {
    dirs.push(dir)
    const abs = dir === "" ? root : join(root, dir)
    let entries: ReadonlyArray<DirEntry>
    try {
      entries = fs.readdir(abs)
    } catch (error) {
      problems.push({ path: dir === "" ? "." : dir, reason: describeError(error) })
      return
    }
    if (entries.some((e) => e.name === ".gitignore" && !e.isDirectory())) {
      try {
        matcher.add(fs.readFile(join(abs, ".gitignore")).toString("utf8"), dir)
      } catch (error) {
        problems.push({ path: dir === "" ? ".gitignore" : `${dir}/.gitignore`, reason: describeError(error) })
      }
    }
    const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of sorted) {
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`
      if (always.includes(entry.name)) continue
      let isDir = entry.isDirectory()
      let isFile = entry.isFile()
      let real: string | undefined
      if (entry.isSymbolicLink()) {
        try {
          const target = fs.stat(join(root, path))
          isDir = target.isDirectory()
          isFile = target.isFile()
          real = fs.realpath(join(root, path))
        } catch (error) {
          problems.push({ path, reason: describeError(error) })
          continue
        }
      }
      // FIFOs, sockets and devices are not files of the tree (git does not list them either).
      if (!isDir && !isFile) continue
      if (matcher.ignores(path, isDir)) continue
      if (!isDir) {
        files.push(path)
        continue
      }
      if (real !== undefined) {
        const rel = relative(realRoot, real)
        if (rel === ".." || rel.startsWith(`..${sep}`)) {
          problems.push({ path, reason: "symlink points outside the repository; skipped" })
          continue
        }
      }
      // Every ancestor's real path is in `chain`, so a link back to any of them is a loop.
      const realDir = real ?? safeRealpath(fs, join(root, path))
      if (realDir !== undefined && chain.has(realDir)) {
        problems.push({ path, reason: "symlink loop" })
        continue
      }
      visit(path, realDir === undefined ? chain : new Set([...chain, realDir]))
    }
  }
  visit("", new Set([realRoot]))
  return files
}

const safeRealpath = (fs: FileSystem, path: string): string | undefined => {
  try {
    return fs.realpath(path)
  } catch {
    return undefined
  }
}

/**
 * List the repository's files: `git ls-files --cached --others --exclude-standard`
 * (paths that no longer exist dropped) when `root` is in a git work tree, else a
 * walk honouring `.gitignore` files. `.git/` and `.strata/` are never listed.
 *
 * @example
 * ```ts
 * import { listFiles, nodeFileSystem } from "@strata/symbols"
 * const { files, source } = listFiles("/path/to/repo", nodeFileSystem)
 * ```
 */
export const listFiles = (root: string, fs: FileSystem, options: ListOptions = {}): Listing => {
  const problems: Array<Problem> = []
  const always = options.alwaysIgnore ?? [".git", ".strata"]
  refuseBareRepository(root, fs)
  const listed = options.git === false ? undefined : gitList(root)
  if (listed !== undefined) {
    const files: Array<string> = []
    for (const path of new Set(listed)) {
      if (isIgnoredDir(path, always)) continue
      try {
        // Tracked files deleted from the work tree, and submodules, are not files of the tree.
        if (!isListable(fs.lstat(join(root, path)))) continue
      } catch {
        continue
      }
      files.push(path)
    }
    return { files: safeNames(files, problems).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), problems, source: "git" }
  }
  const files = safeNames(walkFiles(root, fs, options, problems), problems)
  return { files: files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), problems, source: "walk" }
}

/** Whether an lstat result is a file of the tree: a regular file or a link (FIFOs, sockets, devices and folders are not). */
export const isListable = (stat: FileStat | undefined): boolean => stat !== undefined && (stat.isFile() || stat.isSymbolicLink())

/**
 * The paths whose names are safe to print in a prompt; a name with a control character
 * or line separator (core's `unsafeNameCharacter`) is left out of the tree and the map
 * and reported, since it could fake the structure of the prompt it is printed in.
 * Core's file reads refuse the same names, so no such name reaches a request.
 */
export const safeNames = (paths: ReadonlyArray<string>, problems: Array<Problem>): Array<string> =>
  paths.filter((path) => {
    const unsafe = unsafeNameCharacter(path)
    if (unsafe === undefined) return true
    problems.push({ path: JSON.stringify(path).slice(1, -1), reason: `the name contains the control character ${unsafe}; left out of the tree and the map (rename the file)` })
    return false
  })

/** Throw a clear error for a bare repository (core's `isBareRepository`): it has no files to list. */
export const refuseBareRepository = (root: string, fs: FileSystem): void => {
  if (isBareRepository(root, fs)) throw new Error(BARE_REPOSITORY_REASON)
}

/** The outcome of reading one source file. */
export type ReadResult =
  | { readonly kind: "text"; readonly text: string; readonly size: number; readonly mtimeMs: number }
  | { readonly kind: "skipped"; readonly reason: string }

/** Whether `bytes` are binary: a NUL byte anywhere (core refuses the same files). */
export const isBinary = (bytes: Uint8Array): boolean => bytes.includes(0)

/**
 * Stat a file through symlinks and refuse what the index must not read: links out
 * of the root, loops, non-files and oversize files.
 */
export const statSource = (
  root: string,
  path: string,
  fs: FileSystem,
  maxBytes: number,
  realRoot: string,
  lstat?: FileStat
): { readonly kind: "ok"; readonly size: number; readonly mtimeMs: number } | { readonly kind: "skipped"; readonly reason: string } | { readonly kind: "not-a-file" } => {
  const abs = `${root}/${path}`
  let stat: FileStat
  try {
    const link = lstat ?? fs.lstat(abs)
    stat = link.isSymbolicLink() ? fs.stat(abs) : link
    if (link.isSymbolicLink()) {
      const rel = relative(realRoot, fs.realpath(abs))
      if (rel.startsWith(`..${sep}`) || rel === "..") return { kind: "skipped", reason: "symlink points outside the repository; skipped" }
    }
  } catch (error) {
    return { kind: "skipped", reason: describeError(error) }
  }
  if (!stat.isFile()) return { kind: "not-a-file" }
  if (stat.size > maxBytes) return { kind: "skipped", reason: `${stat.size} bytes, over the ${maxBytes}-byte limit; listed in the tree only` }
  return { kind: "ok", size: stat.size, mtimeMs: stat.mtimeMs }
}

/** Read a file as UTF-8 text, refusing binary content. */
export const readSource = (root: string, path: string, fs: FileSystem): ReadResult => {
  let bytes: Buffer
  try {
    bytes = fs.readFile(`${root}/${path}`)
  } catch (error) {
    return { kind: "skipped", reason: describeError(error) }
  }
  if (isBinary(bytes)) return { kind: "skipped", reason: "binary (contains a NUL byte); listed in the tree only" }
  return { kind: "text", text: bytes.toString("utf8"), size: bytes.length, mtimeMs: 0 }
}
