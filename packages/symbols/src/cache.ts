/**
 * The on-disk extraction cache under `<repo>/.strata/symbols/`: a small index
 * (path → mtime, size, content hash) plus one content-addressed object per
 * extracted file, so a one-file change rewrites the index and one object, never the
 * whole cache. Writes are atomic (temp file, then rename); anything unreadable or
 * from another version is ignored and rebuilt.
 */
import { Schema } from "effect"
import { dirname, join } from "node:path"
import { EXTRACTOR_VERSION } from "./extract/index.ts"
import type { FileSystem } from "./files.ts"
import { type FileSymbols, ImportInfo, CallSite, Language, ParseIssue, SymbolInfo } from "./model.ts"

/** Bumped when the cache layout changes; the extractor version is part of the key too. */
export const CACHE_VERSION = `1.${EXTRACTOR_VERSION}`

const IndexFile = Schema.Struct({
  version: Schema.String,
  entries: Schema.Array(Schema.Tuple([Schema.String, Schema.Number, Schema.Number, Schema.String]))
})

/** What an object stores: the extraction without the path (content-addressed). */
const ObjectFile = Schema.Struct({
  language: Language,
  imports: Schema.Array(ImportInfo),
  symbols: Schema.Array(SymbolInfo),
  calls: Schema.Array(CallSite),
  errors: Schema.Array(ParseIssue)
})

const decodeIndex = Schema.decodeUnknownSync(IndexFile)
const decodeObject = Schema.decodeUnknownSync(ObjectFile)

/** A cached file state: when unchanged, its extraction is `key`'s object. */
export interface CacheEntry {
  readonly mtimeMs: number
  readonly size: number
  /** SHA-256 of the content. */
  readonly hash: string
}

/** The object key of a content hash read as `language`. */
export const objectKey = (hash: string, language: Language): string => `${hash}.${language}`

/** The extraction cache of one repository. */
export class SymbolCache {
  private readonly dir: string
  private readonly objectsDir: string
  private readonly written = new Set<string>()
  private readonly dirs = new Set<string>()
  private present: Set<string> | undefined
  private readonly fs: FileSystem

  constructor(root: string, fs: FileSystem, cacheDir = ".strata") {
    this.fs = fs
    this.dir = join(root, cacheDir, "symbols")
    // Objects are versioned with the extractor: an upgrade never reads an older shape.
    this.objectsDir = join(this.dir, `objects-${CACHE_VERSION}`)
  }

  /** Load the index; a missing file is an empty cache, an unreadable one is reported. */
  loadIndex(): { readonly entries: Map<string, CacheEntry>; readonly problem?: string } {
    let text: string
    try {
      text = this.fs.readFile(join(this.dir, "index.json")).toString("utf8")
    } catch {
      return { entries: new Map() }
    }
    try {
      const index = decodeIndex(JSON.parse(text))
      if (index.version !== CACHE_VERSION) return { entries: new Map() }
      return { entries: new Map(index.entries.map(([path, mtimeMs, size, hash]) => [path, { mtimeMs, size, hash }])) }
    } catch (error) {
      return { entries: new Map(), problem: `symbol cache unreadable (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); rebuilt` }
    }
  }

  /** The cached extraction of `key` for `path`, or undefined when absent or corrupt. */
  loadObject(path: string, key: string): FileSymbols | undefined {
    // One directory listing per session answers "absent" without a failing read per new file.
    this.present ??= this.listObjects()
    if (!this.present.has(key) && !this.written.has(key)) return undefined
    try {
      const text = this.fs.readFile(this.objectPath(key)).toString("utf8")
      return { path, ...decodeObject(JSON.parse(text)) }
    } catch {
      return undefined
    }
  }

  /** Store the extraction of `key` (once per key per session). */
  saveObject(key: string, symbols: FileSymbols): void {
    if (this.written.has(key)) return
    const { path: _path, ...object } = symbols
    this.atomicWrite(this.objectPath(key), JSON.stringify(object))
    this.written.add(key)
  }

  /** Replace the index. */
  saveIndex(entries: ReadonlyMap<string, CacheEntry>): void {
    const list = [...entries].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([path, e]) => [path, e.mtimeMs, e.size, e.hash] as const)
    this.atomicWrite(join(this.dir, "index.json"), JSON.stringify({ version: CACHE_VERSION, entries: list }))
  }

  private listObjects(): Set<string> {
    const keys = new Set<string>()
    let shards: ReadonlyArray<string>
    try {
      shards = this.fs.readdir(this.objectsDir).map((d) => d.name)
    } catch {
      return keys
    }
    for (const shard of shards) {
      try {
        for (const d of this.fs.readdir(join(this.objectsDir, shard))) if (d.name.endsWith(".json")) keys.add(d.name.slice(0, -5))
      } catch {
        // An unreadable shard holds nothing usable.
      }
    }
    return keys
  }

  /** Delete objects no entry refers to (keys are `hash.language`). */
  collect(live: ReadonlySet<string>): number {
    let removed = 0
    let shards: ReadonlyArray<string>
    try {
      shards = this.fs.readdir(this.objectsDir).map((d) => d.name)
    } catch {
      return 0
    }
    for (const shard of shards) {
      let names: ReadonlyArray<string>
      try {
        names = this.fs.readdir(join(this.objectsDir, shard)).map((d) => d.name)
      } catch {
        continue
      }
      for (const name of names) {
        const key = name.replace(/\.json$/, "")
        if (live.has(key)) continue
        try {
          this.fs.unlink(join(this.objectsDir, shard, name))
          this.written.delete(key)
          this.present?.delete(key)
          removed++
        } catch {
          // Another process may have removed it; nothing to do.
        }
      }
    }
    return removed
  }

  private objectPath(key: string): string {
    return join(this.objectsDir, key.slice(0, 2), `${key}.json`)
  }

  private atomicWrite(path: string, data: string): void {
    const dir = dirname(path)
    if (!this.dirs.has(dir)) {
      this.fs.mkdir(dir)
      this.dirs.add(dir)
    }
    const tmp = `${path}.${process.pid}.tmp`
    this.fs.writeFile(tmp, data)
    this.fs.rename(tmp, path)
  }
}
