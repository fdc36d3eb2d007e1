/**
 * The on-disk extraction cache under `<repo>/.strata/symbols/`: a small index
 * (path → mtime, size, content hash) and packs of content-addressed extractions. A
 * refresh appends one pack holding what it parsed (one write, however many files), so
 * a one-file change writes one small pack; packs are compacted at session start.
 * Writes are atomic (temp file, then rename); anything unreadable or from another
 * version is ignored and rebuilt. Every path is checked with core's `insideRepo`
 * helpers: a cache folder or file that links out of the repository fails with
 * `PathOutsideRepo`, and nothing is written through a link.
 */
import { PathOutsideRepo, resolveInsideRepoSync, type PathFileSystem } from "@strata/core"
import { Schema } from "effect"
import { join } from "node:path"
import { EXTRACTOR_VERSION } from "./extract.ts"
import type { FileSystem } from "./files.ts"
import { type FileSymbols, ImportInfo, CallSite, Language, ParseIssue, SymbolInfo } from "./syntax/model.ts"

/** Bumped when the cache layout changes; the extractor version is part of it. */
export const CACHE_VERSION = `2.${EXTRACTOR_VERSION}`

const IndexFile = Schema.Struct({
  version: Schema.String,
  entries: Schema.Array(Schema.Tuple([Schema.String, Schema.Number, Schema.Number, Schema.String]))
})

/** What a pack stores per key: the extraction without the path (content-addressed). */
const ObjectFile = Schema.Struct({
  language: Language,
  imports: Schema.Array(ImportInfo),
  symbols: Schema.Array(SymbolInfo),
  calls: Schema.Array(CallSite),
  errors: Schema.Array(ParseIssue)
})
type ObjectFile = typeof ObjectFile.Type

const decodeIndex = Schema.decodeUnknownSync(IndexFile)
const decodeObject = Schema.decodeUnknownSync(ObjectFile)

/** A cached file state: when unchanged, its extraction is `key`'s object. */
export interface SymbolCacheEntry {
  readonly mtimeMs: number
  readonly size: number
  /** SHA-256 of the content. */
  readonly hash: string
}

/** The object key of a content hash read as `language`. */
export const objectKey = (hash: string, language: Language): string => `${hash}.${language}`

/** Packs beyond this count (or mostly dead ones) are compacted into one at session start. */
const MAX_PACKS = 16

/** The extraction cache of one repository. */
export class SymbolCache {
  private readonly root: string
  /** Folders relative to the root. */
  private readonly dir: string
  private readonly packsDir: string
  private readonly fs: FileSystem
  private readonly pathFs: PathFileSystem
  /** Raw objects by key, and the pack each came from; read on first use. */
  private objects: Map<string, { readonly raw: unknown; readonly pack: string }> | undefined
  private pending = new Map<string, ObjectFile>()
  private sequence = 0

  constructor(root: string, fs: FileSystem, cacheDir = ".strata") {
    this.root = root
    this.fs = fs
    this.pathFs = { lstat: (p) => fs.lstat(p), realpath: (p) => fs.realpath(p), mkdir: (p) => fs.mkdir(p) }
    this.dir = join(cacheDir, "symbols")
    // Packs are versioned with the extractor: an upgrade never reads an older shape.
    this.packsDir = join(this.dir, `packs-${CACHE_VERSION}`)
  }

  /** Where `relative` really is, checked to lie inside the repository (links resolved). */
  private resolve(relative: string, create = false): { readonly real: string; readonly exists: boolean } {
    return resolveInsideRepoSync(this.root, relative, { create, fs: this.pathFs })
  }

  /** A cache file's bytes, or undefined when missing or unreadable; a link out throws `PathOutsideRepo`. */
  private read(relative: string): Buffer | undefined {
    try {
      const target = this.resolve(relative)
      return target.exists ? this.fs.readFile(target.real) : undefined
    } catch (error) {
      if (error instanceof PathOutsideRepo) throw error
      return undefined
    }
  }

  /** Load the index; a missing file is an empty cache, an unreadable one is reported. */
  loadIndex(): { readonly entries: Map<string, SymbolCacheEntry>; readonly problem?: string } {
    const bytes = this.read(join(this.dir, "index.json"))
    if (bytes === undefined) return { entries: new Map() }
    const text = bytes.toString("utf8")
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
    const pending = this.pending.get(key)
    if (pending !== undefined) return { path, ...pending }
    const found = this.packs().get(key)
    if (found === undefined) return undefined
    try {
      return { path, ...decodeObject(found.raw) }
    } catch {
      return undefined
    }
  }

  /** Queue the extraction of `key`; `flush` writes everything queued as one pack. */
  saveObject(key: string, symbols: FileSymbols): void {
    if (this.pending.has(key) || this.objects?.has(key) === true) return
    const { path: _path, ...object } = symbols
    this.pending.set(key, object)
  }

  /** Write the queued extractions as one new pack. */
  flush(): void {
    if (this.pending.size === 0) return
    const name = `${this.stamp()}.json`
    this.atomicWrite(join(this.packsDir, name), JSON.stringify(Object.fromEntries(this.pending)))
    const objects = this.packs()
    for (const [key, raw] of this.pending) objects.set(key, { raw, pack: name })
    this.pending = new Map()
  }

  /** Replace the index. */
  saveIndex(entries: ReadonlyMap<string, SymbolCacheEntry>): void {
    const list = [...entries].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([path, e]) => [path, e.mtimeMs, e.size, e.hash] as const)
    this.atomicWrite(join(this.dir, "index.json"), JSON.stringify({ version: CACHE_VERSION, entries: list }))
  }

  /**
   * Drop objects no entry refers to: when there are many packs or most objects are
   * dead, the live ones are rewritten as one pack and the old packs deleted.
   * Returns how many objects were dropped.
   */
  collect(live: ReadonlySet<string>): number {
    const objects = this.packs()
    const packNames = new Set([...objects.values()].map((o) => o.pack))
    const dead = [...objects.keys()].filter((k) => !live.has(k)).length
    if (packNames.size <= MAX_PACKS && dead * 2 <= objects.size) return 0
    const keep = new Map([...objects].filter(([key]) => live.has(key)).map(([key, o]) => [key, o.raw]))
    const name = `${this.stamp()}.json`
    this.atomicWrite(join(this.packsDir, name), JSON.stringify(Object.fromEntries(keep)))
    const packsDir = this.resolve(this.packsDir).real
    for (const pack of packNames) {
      try {
        this.fs.unlink(join(packsDir, pack))
      } catch {
        // Already gone (another session compacted): nothing to do.
      }
    }
    this.objects = new Map([...keep].map(([key, raw]) => [key, { raw, pack: name }]))
    return dead
  }

  /** Every object of every pack, read once; unreadable packs are skipped. */
  private packs(): Map<string, { readonly raw: unknown; readonly pack: string }> {
    if (this.objects !== undefined) return this.objects
    const objects = new Map<string, { readonly raw: unknown; readonly pack: string }>()
    let names: ReadonlyArray<string> = []
    try {
      const packsDir = this.resolve(this.packsDir)
      if (packsDir.exists) {
        names = this.fs
          .readdir(packsDir.real)
          .map((d) => d.name)
          .filter((n) => n.endsWith(".json"))
          .sort()
      }
    } catch (error) {
      if (error instanceof PathOutsideRepo) throw error
      // No packs yet.
    }
    for (const name of names) {
      const bytes = this.read(join(this.packsDir, name))
      if (bytes === undefined) continue
      try {
        const pack: unknown = JSON.parse(bytes.toString("utf8"))
        if (typeof pack !== "object" || pack === null || Array.isArray(pack)) continue
        for (const [key, raw] of Object.entries(pack)) objects.set(key, { raw, pack: name })
      } catch {
        // A torn or foreign pack: its objects are simply re-parsed.
      }
    }
    this.objects = objects
    return objects
  }

  /** A pack name that sorts after existing ones and is unique to this process. */
  private stamp(): string {
    this.sequence++
    return `${process.pid}-${String(this.sequence).padStart(6, "0")}-${Math.random().toString(36).slice(2, 8)}`
  }

  /** Write a file of the cache: a temporary file next to its real path, then a rename (never through a link). */
  private atomicWrite(relative: string, data: string): void {
    const target = this.resolve(relative, true)
    const tmp = `${target.real}.${process.pid}.${++this.sequence}.tmp`
    this.fs.writeFile(tmp, data)
    try {
      this.fs.rename(tmp, target.real)
    } catch (error) {
      try {
        this.fs.unlink(tmp)
      } catch {
        // Nothing left to clean.
      }
      throw error
    }
  }
}
