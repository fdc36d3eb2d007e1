/**
 * An in-memory, synchronous `FileSystem` for `@strata/symbols` over one replay turn's
 * files, so the symbol map, legend and file tree update per turn exactly as in a live
 * session without checking anything out. Like a real file system, a file whose blob
 * changed gets a new mtime (the indexer re-parses it, and only it) and a directory
 * whose entries changed gets a new mtime (the indexer lists the tree again).
 */
import type { DirEntry, FileStat, FileSystem } from "@strata/symbols"

interface MemFile {
  readonly blob: string
  readonly bytes: Buffer
  readonly mtimeMs: number
}

/** One file of a turn: its path, blob id and content (undefined for binary or oversize files). */
export interface MemFileInput {
  readonly path: string
  readonly blob: string
  readonly content: string | undefined
}

const stat = (kind: "file" | "dir", size: number, mtimeMs: number): FileStat => ({
  size,
  mtimeMs,
  isFile: () => kind === "file",
  isDirectory: () => kind === "dir",
  isSymbolicLink: () => false
})

const entry = (name: string, kind: "file" | "dir"): DirEntry => ({
  name,
  isFile: () => kind === "file",
  isDirectory: () => kind === "dir",
  isSymbolicLink: () => false
})

const enoent = (path: string): Error => Object.assign(new Error(`ENOENT: no such file or directory, '${path}'`), { code: "ENOENT" })
const erofs = (path: string): Error => Object.assign(new Error(`EROFS: read-only file system, '${path}'`), { code: "EROFS" })

// A NUL byte: the indexer sees binary and oversize files as binary and lists them in the tree only.
const PLACEHOLDER = Buffer.from([0])

/**
 * A read-only in-memory repository rooted at `root` (an absolute path that exists
 * nowhere on disk). `set` replaces the whole tree; writes fail with EROFS, so the
 * indexer must run with `cache: false`.
 */
export class MemoryFileSystem implements FileSystem {
  readonly root: string
  private files = new Map<string, MemFile>()
  private dirs = new Map<string, Map<string, "file" | "dir">>()
  private dirTimes = new Map<string, number>()
  private clock = 0

  constructor(root: string) {
    this.root = root.replace(/\/+$/, "")
  }

  /** Replace the tree; unchanged blobs keep their mtime, changed and new ones get a fresh one. */
  set(files: ReadonlyArray<MemFileInput>): void {
    const next = new Map<string, MemFile>()
    this.clock++
    for (const f of files) {
      const known = this.files.get(f.path)
      if (known !== undefined && known.blob === f.blob) {
        next.set(f.path, known)
        continue
      }
      const bytes = f.content === undefined ? PLACEHOLDER : Buffer.from(f.content, "utf8")
      next.set(f.path, { blob: f.blob, bytes, mtimeMs: this.clock * 1000 })
    }
    this.files = next
    const dirs = new Map<string, Map<string, "file" | "dir">>([["", new Map()]])
    for (const path of next.keys()) {
      const parts = path.split("/")
      let dir = ""
      for (let i = 0; i < parts.length; i++) {
        const name = parts[i]!
        const kind = i === parts.length - 1 ? "file" : "dir"
        let children = dirs.get(dir)
        if (children === undefined) {
          children = new Map()
          dirs.set(dir, children)
        }
        children.set(name, kind)
        dir = dir === "" ? name : `${dir}/${name}`
      }
    }
    // A directory's mtime moves when an entry is added or removed, as on disk.
    const times = new Map<string, number>()
    for (const [dir, children] of dirs) {
      const before = this.dirs.get(dir)
      const same = before !== undefined && before.size === children.size && [...children.keys()].every((name) => before.has(name))
      times.set(dir, same ? (this.dirTimes.get(dir) ?? 0) : this.clock * 1000)
    }
    this.dirs = dirs
    this.dirTimes = times
  }

  /** Repository-relative path of an absolute one, or undefined outside the root. */
  private rel(path: string): string | undefined {
    const clean = path.replace(/\/+$/, "").replace(/\/\.(?=\/|$)/g, "")
    if (clean === this.root) return ""
    return clean.startsWith(`${this.root}/`) ? clean.slice(this.root.length + 1) : undefined
  }

  stat(path: string): FileStat {
    const rel = this.rel(path)
    if (rel === undefined) throw enoent(path)
    const file = this.files.get(rel)
    if (file !== undefined) return stat("file", file.bytes.length, file.mtimeMs)
    if (this.dirs.has(rel)) return stat("dir", 0, this.dirTimes.get(rel) ?? 0)
    throw enoent(path)
  }

  lstat(path: string): FileStat {
    return this.stat(path)
  }

  readFile(path: string): Buffer {
    const rel = this.rel(path)
    const file = rel === undefined ? undefined : this.files.get(rel)
    if (file === undefined) throw enoent(path)
    return file.bytes
  }

  readdir(path: string): ReadonlyArray<DirEntry> {
    const rel = this.rel(path)
    const children = rel === undefined ? undefined : this.dirs.get(rel)
    if (children === undefined) throw enoent(path)
    return [...children].map(([name, kind]) => entry(name, kind))
  }

  realpath(path: string): string {
    this.stat(path)
    return path.replace(/\/+$/, "")
  }

  writeFile(path: string): void {
    throw erofs(path)
  }

  rename(from: string): void {
    throw erofs(from)
  }

  mkdir(path: string): void {
    throw erofs(path)
  }

  unlink(path: string): void {
    throw erofs(path)
  }
}
