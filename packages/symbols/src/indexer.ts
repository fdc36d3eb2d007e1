/**
 * The incremental symbol indexer of one repository: lists files, re-extracts only
 * files whose mtime and size changed and whose content hash differs, keeps an
 * on-disk cache under `.strata/`, then resolves imports, builds the reference graph
 * and renders the map. The path aliases (and so the legend) are fixed by the first
 * refresh and kept for the indexer's lifetime: one indexer is one session.
 */
import { estimateTokens, PathOutsideRepo, sha256, unsafeNameCharacter, type SymbolMapDelta, type SymbolMapSnapshot } from "@strata/core"
import { isAbsolute, join, resolve } from "node:path"
import ignore, { type Ignore } from "ignore"
import { budgetedMap, renderMap } from "./mapBudget.ts"
import { SymbolCache, objectKey } from "./cache.ts"
import {
  type FileStat,
  type FileSystem,
  type Problem,
  describeError,
  gitIgnoredDirs,
  gitLsFiles,
  listDirectories,
  inIgnoredDir,
  isListable,
  nodeFileSystem,
  readSource,
  refuseBareRepository,
  safeNames,
  statSource,
  walkFiles
} from "./files.ts"
import {
  type AliasOptions,
  type BlockModel,
  type FormatOptions,
  type PathAlias,
  blockHash,
  blockModel,
  computeAliases,
  formatFileTree,
  formatLegend,
  renderBlock
} from "./format.ts"
import {
  type Contribution,
  type ReferenceGraph,
  connectedComponents,
  fileContribution,
  graphFromContributions,
  pageRank,
  rankFiles,
  updateGraph
} from "./graph.ts"
import { focusRanking, referenceData } from "./focusRank.ts"
import { type FileSymbols, type Language, languageOf } from "./syntax/model.ts"
import { Parsers } from "./syntax/parser.ts"
import { type ExtractJob, defaultWorkers, extractAll } from "./internal/pool.ts"
import {
  type ResolveContext,
  type ResolvedCall,
  type ResolvedImports,
  buildResolveContext,
  definedNames,
  resolveCalls,
  resolveImports
} from "./resolve.ts"

/**
 * What the map keeps of a file with parse errors, exactly: its symbols by name (the first
 * few), and counts of imports and calls; the code at the error lines adds nothing.
 */
const keptSummary = (symbols: FileSymbols): string => {
  const names = symbols.symbols.map((s) => s.name)
  const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? `, +${names.length - 5} more` : "")
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`
  if (names.length === 0 && symbols.imports.length === 0 && symbols.calls.length === 0) return "nothing of the file is in the map"
  return `the map keeps ${plural(names.length, "top-level symbol")}${names.length > 0 ? ` (${shown})` : ""}, ${plural(symbols.imports.length, "import")} and ${plural(symbols.calls.length, "call")} from the rest of the file; the code at those lines is left out`
}

/** A refresh that parsed or re-hashed at least this many files writes the cache index at once. */
const INDEX_BULK = 16

/** Default size limit: larger files appear in the tree only. */
export const DEFAULT_MAX_INDEXED_FILE_BYTES = 512 * 1024

/** Options of a `SymbolIndexer` (and of the `SymbolIndex` layer). */
export interface IndexOptions {
  /** Files larger than this many bytes are listed but not parsed. Default 512 KiB. */
  readonly maxFileBytes?: number
  /** Keep the extraction cache under `<root>/<cacheDir>/symbols/`. Default true. */
  readonly cache?: boolean
  /** Default ".strata". */
  readonly cacheDir?: string
  /** Ask git for the file list (default true); false always walks the directory. */
  readonly git?: boolean
  /** Extra ignore patterns when walking outside git. Default `["node_modules/"]`. */
  readonly walkIgnore?: ReadonlyArray<string>
  /**
   * Only files matching one of these patterns are in the map (its symbol blocks and file
   * tree), in `.gitignore` syntax (`src/`, `*.ts`, `/lib/`). Default: every file.
   */
  readonly include?: ReadonlyArray<string>
  /**
   * Files matching one of these patterns are left out of the map (`bench/`, `fixtures/`,
   * `*.test.ts`), in `.gitignore` syntax; applied after `include`. Default: none.
   */
  readonly exclude?: ReadonlyArray<string>
  /** Use these path aliases instead of computing them (to restore a session's legend). */
  readonly aliases?: ReadonlyArray<PathAlias>
  readonly aliasOptions?: AliasOptions
  readonly format?: FormatOptions
  /** The file system (default node:fs). */
  readonly fs?: FileSystem
  /**
   * Worker threads for large batches of files to parse (a cold index): a number, or
   * "auto" for one per core (at most 4). Default 0: parse in this thread, which costs
   * the least CPU and wins on a busy machine; workers win on an idle multi-core one.
   * Used only from the built package (the worker is `dist/internal/worker.js`).
   */
  readonly workers?: number | "auto"
}

/** Options of one `SymbolIndexer.refresh`. */
export interface RefreshOptions {
  /**
   * Repository-relative paths that may have been created, modified or deleted since
   * the previous refresh; every other file is trusted unchanged, so nothing else is
   * listed or stat-ed. For callers that know what they wrote (an editor, an agent
   * applying edits). The paths must be files of the tree (not ignored); a refresh
   * without hints afterwards catches up on anything the hints missed.
   */
  readonly changed?: ReadonlyArray<string>
  /**
   * Hears the parse's progress, `(parsed, toParse)`, as each file is parsed (a cold index
   * of a large repository takes seconds). Not called when nothing needs parsing.
   */
  readonly onProgress?: (parsed: number, toParse: number) => void
}

/** Counters of one refresh. */
export interface IndexStats {
  /** Files in the tree. */
  readonly files: number
  /** Files with a symbol block. */
  readonly symbolFiles: number
  /** Files parsed by tree-sitter in this refresh. */
  readonly parsed: number
  /** Files read and hashed whose content turned out unchanged. */
  readonly rehashed: number
  /** Files reused on mtime and size alone (or from the disk cache). */
  readonly reused: number
  /** Milliseconds per phase (list, scan, resolve, graph, blocks, rank), for diagnostics. */
  readonly timings: Readonly<Record<string, number>>
}

/** Options of `SymbolMap.budgeted`. */
export interface BudgetOptions {
  /** Token budget for the legend plus the chosen blocks (the legend lists only the aliases they use). */
  readonly budgetTokens: number
  /** Token counter (default: core's chars/4 estimate). */
  readonly countTokens?: (text: string) => number
  /** Files to leave out (for example those whose full content is in context). */
  readonly exclude?: ReadonlySet<string>
}

/** A map cut to a budget. */
export interface BudgetedMap {
  /** The legend (its key, and the aliases the chosen blocks use) plus the chosen blocks; empty when the budget is below `minimumTokens`. */
  readonly text: string
  /** The legend `text` starts with. */
  readonly legend: string
  /** Chosen files, sorted by path. */
  readonly files: ReadonlyArray<string>
  /** Files with a block that did not fit. */
  readonly omitted: number
  /** Tokens of `text`: at most the budget. */
  readonly tokens: number
  /** The smallest map: the legend's abbreviation key alone. A smaller budget gets no map (`fits: false`). */
  readonly minimumTokens: number
  /** False when the budget is below `minimumTokens`. */
  readonly fits: boolean
}

/**
 * The symbol map of a repository at one moment: core's `SymbolMapSnapshot` plus the
 * graph, ranking and per-file data behind it.
 *
 * `fileTree` is the bare list (one path per line, each line ending with a newline):
 * the pipeline puts it under core's `FILE_TREE_HEADER`, so the v1 count line
 * `# File Tree (N files)` is not rendered. `legend` and every block end with one
 * newline; join them with "\n" for a blank line between blocks.
 */
export interface SymbolMap extends SymbolMapSnapshot {
  /** The path aliases the legend advertises and every block uses. */
  readonly aliases: ReadonlyArray<PathAlias>
  readonly graph: ReferenceGraph
  /** PageRank-style score per file. */
  readonly scores: ReadonlyMap<string, number>
  /** `symbolFiles` by descending score (ties by path). */
  readonly ranked: ReadonlyArray<string>
  /** The extraction of one file. */
  readonly symbols: (path: string) => FileSymbols | undefined
  /** The block model (the data its hash covers). */
  readonly model: (path: string) => BlockModel | undefined
  /** Resolved imports of one file. */
  readonly imports: (path: string) => ResolvedImports | undefined
  /** Resolved calls of one file. */
  readonly calls: (path: string) => ReadonlyArray<ResolvedCall> | undefined
  /** The whole map (legend + every block not in `exclude`), in path order. */
  readonly render: (exclude?: ReadonlySet<string>) => string
  /**
   * The map cut to a token budget, ranked by score; files chosen in an earlier call
   * on the same indexer stay while they fit, so the map does not churn.
   */
  readonly budgeted: (options: BudgetOptions) => BudgetedMap
  readonly stats: IndexStats
}

interface Entry {
  readonly mtimeMs: number
  readonly size: number
  readonly hash: string
  readonly symbols: FileSymbols
}

/** A file as the on-disk cache index remembers it. */
interface DiskEntry {
  readonly mtimeMs: number
  readonly size: number
  readonly hash: string
}

/** A file to parse, with what its entry will record. */
type ParseJob = ExtractJob & { readonly mtimeMs: number; readonly size: number; readonly hash: string }

/** What one refresh's scan of the listed files reads from. */
interface ScanSource {
  readonly realRoot: string
  readonly maxBytes: number
  /** lstats taken while listing. */
  readonly stats: ReadonlyMap<string, FileStat>
  readonly disk: ReadonlyMap<string, DiskEntry>
}

/** What a source file needs in this refresh (see `scanFile`). */
type ScanOutcome =
  | { readonly kind: "reused" | "rehashed"; readonly entry: Entry }
  | { readonly kind: "skipped"; readonly problem: Problem }
  | { readonly kind: "parse"; readonly job: ParseJob }

interface ConfigText {
  readonly mtimeMs: number
  readonly size: number
  readonly text: string | undefined
}

const CONFIG_FILES = new Set(["tsconfig.json", "jsconfig.json", "package.json", "go.mod", "Cargo.toml"])

/**
 * Indexes one repository incrementally. Create with `SymbolIndexer.create`, call
 * `refresh()` whenever the map is needed; unchanged files are never re-parsed.
 *
 * @example
 * ```ts no-run
 * import { SymbolIndexer } from "@strata/symbols"
 * const indexer = await SymbolIndexer.create("/path/to/repo")
 * const map = await indexer.refresh()
 * console.log(map.legend + "\n" + map.symbolFiles.map((p) => map.block(p)).join("\n"))
 * ```
 */
export class SymbolIndexer {
  readonly root: string
  private readonly fs: FileSystem
  private readonly cache: SymbolCache | undefined
  private entries = new Map<string, Entry>()
  private diskEntries: Map<string, DiskEntry> | undefined
  private aliases: ReadonlyArray<PathAlias> | undefined
  private readonly configs = new Map<string, ConfigText>()
  private readonly defs = new WeakMap<FileSymbols, ReadonlySet<string>>()
  private readonly callNames = new WeakMap<FileSymbols, ReadonlySet<string>>()
  private readonly parseProblems = new WeakMap<FileSymbols, Problem>()
  private skipped = new Map<string, Problem>()
  private previousSelection = new Set<string>()
  private memo: Memo = emptyMemo()
  /** The `revision` of the last map built, which the next map's `delta` is relative to. */
  private lastRevision: object | undefined
  private files: ReadonlyArray<string> = []
  /** What the last listing depended on (absolute paths and their mtimes), and the problems it reported. */
  private watch:
    | { readonly paths: ReadonlyArray<string>; readonly mtimes: ReadonlyArray<number>; readonly confirmed: boolean; readonly problems: ReadonlyArray<Problem> }
    | undefined
  private configChanged = false
  private running: Promise<unknown> = Promise.resolve()
  private cacheBroken = false
  private collected = false
  private indexStale = false
  private indexWritten = false

  private readonly parsers: Parsers
  private readonly options: IndexOptions

  private constructor(root: string, parsers: Parsers, options: IndexOptions) {
    this.parsers = parsers
    this.options = options
    this.root = isAbsolute(root) ? root : resolve(root)
    this.fs = options.fs ?? nodeFileSystem
    this.cache = options.cache === false ? undefined : new SymbolCache(this.root, this.fs, options.cacheDir)
    this.aliases = options.aliases
  }

  /** An indexer for `root` (loads the tree-sitter runtime; grammars load on first use). */
  static async create(root: string, options: IndexOptions = {}): Promise<SymbolIndexer> {
    return new SymbolIndexer(root, await Parsers.load(), options)
  }

  /**
   * Bring the index up to date with the working tree and return the map. Calls are
   * serialized. With `changed`, only those paths are looked at (see `RefreshOptions`).
   */
  refresh(options: RefreshOptions = {}): Promise<SymbolMap> {
    const run = this.running.then(() => this.refreshNow(options.changed === undefined ? undefined : new Set(options.changed), options.onProgress))
    this.running = run.catch(() => undefined)
    return run
  }

  /**
   * Render with these path aliases from the next refresh on: a session's recorded ones,
   * so the legend is byte-identical to the one another process cached. The blocks are
   * rebuilt only when the aliases differ from the current ones. Serialized with `refresh`.
   *
   * @example
   * ```ts no-run
   * import { SymbolIndexer } from "@strata/symbols"
   * const indexer = await SymbolIndexer.create(".")
   * await indexer.useAliases([{ token: "@1/", prefix: "packages/core/src/" }])
   * const map = await indexer.refresh()
   * map.legend // ...# @1/=packages/core/src/
   * ```
   */
  useAliases(aliases: ReadonlyArray<PathAlias>): Promise<void> {
    const run = this.running.then(() => {
      const current = this.aliases
      if (current !== undefined && current.length === aliases.length && current.every((a, i) => a.token === aliases[i]!.token && a.prefix === aliases[i]!.prefix)) return
      this.aliases = aliases.map((a) => ({ token: a.token, prefix: a.prefix }))
      // Block models embed the aliases their paths use; the next map starts a new chain of deltas.
      this.memo.blocks = new Map()
      this.lastRevision = undefined
    })
    this.running = run.catch(() => undefined)
    return run
  }

  /**
   * The file list, with an lstat of each file. Listing again is skipped when no
   * directory a file could appear in, no `.gitignore` and not the git index changed
   * since a listing known to be consistent (their mtimes were the same before and
   * after it). Otherwise git runs in a child process while this process stats the
   * previous refresh's files.
   */
  private async list(): Promise<{ readonly files: ReadonlyArray<string>; readonly stats: ReadonlyMap<string, FileStat>; readonly problems: ReadonlyArray<Problem> }> {
    const always = [".git", this.options.cacheDir ?? ".strata"]
    const stats = new Map<string, FileStat>()
    const missing = new Set<string>()
    const lstat = (path: string): void => {
      try {
        stats.set(path, this.fs.lstat(`${this.root}/${path}`))
      } catch {
        missing.add(path)
      }
    }
    const before = this.watch === undefined ? undefined : this.mtimes(this.watch.paths)
    if (this.watch?.confirmed === true && sameNumbers(before!, this.watch.mtimes)) {
      for (const path of this.files) lstat(path)
      const files = this.files.filter((path) => isListable(stats.get(path)))
      return { files, stats, problems: this.watch.problems }
    }
    const useGit = this.options.git !== false
    const pending = useGit ? gitLsFiles(this.root) : Promise.resolve(undefined)
    const pendingIgnored = useGit ? gitIgnoredDirs(this.root) : Promise.resolve(undefined)
    for (const path of this.files) lstat(path)
    const listed = await pending
    const ignoredDirs = await pendingIgnored
    let files: Array<string>
    const problems: Array<Problem> = []
    let dirs: Array<string>
    if (listed === undefined) {
      const walkOptions = { ...(this.options.walkIgnore === undefined ? {} : { walkIgnore: this.options.walkIgnore }), alwaysIgnore: always }
      dirs = []
      files = safeNames(walkFiles(this.root, this.fs, walkOptions, problems, dirs), problems).sort(byCodeUnit)
      for (const path of files) if (!stats.has(path)) lstat(path)
    } else {
      files = []
      for (const path of new Set(listed)) {
        if (inIgnoredDir(path, always)) continue
        if (!stats.has(path) && !missing.has(path)) lstat(path)
        // Tracked files deleted from the work tree, submodules, FIFOs and sockets are not files of the tree.
        if (!isListable(stats.get(path))) continue
        files.push(path)
      }
      files = safeNames(files, problems)
      files.sort(byCodeUnit)
      const ignored = ignoredDirs ?? new Set<string>()
      dirs = listDirectories(this.root, this.fs, always, (dir) => ignored.has(`${dir}/`))
    }
    const paths = [".git/index", ".git/info/exclude", ...dirs.sort(byCodeUnit), ...files.filter((f) => f === ".gitignore" || f.endsWith("/.gitignore"))].map((p) =>
      p === "" ? this.root : `${this.root}/${p}`
    )
    const after = this.mtimes(paths)
    // Trust this listing for skipping only if nothing it depends on moved while it ran.
    const confirmed = before !== undefined && this.watch !== undefined && sameList(this.watch.paths, paths) && sameNumbers(before, after)
    this.watch = { paths, mtimes: after, confirmed, problems }
    this.files = files
    return { files, stats, problems }
  }

  /** The previous listing with `changed` paths added (when they exist) or removed (when not). */
  private patchListing(changed: ReadonlySet<string>): { readonly files: ReadonlyArray<string>; readonly stats: ReadonlyMap<string, FileStat>; readonly problems: ReadonlyArray<Problem> } {
    const stats = new Map<string, FileStat>()
    const files = new Set(this.files)
    for (const path of changed) {
      try {
        const stat = this.fs.lstat(`${this.root}/${path}`)
        stats.set(path, stat)
        if (!isListable(stat) || unsafeNameCharacter(path) !== undefined) files.delete(path)
        else files.add(path)
      } catch {
        files.delete(path)
      }
    }
    this.files = [...files].sort(byCodeUnit)
    return { files: this.files, stats, problems: this.watch?.problems ?? [] }
  }

  /** mtimes of `paths` (-1 for a path that does not exist). */
  private mtimes(paths: ReadonlyArray<string>): Array<number> {
    return paths.map((p) => {
      try {
        return this.fs.stat(p).mtimeMs
      } catch {
        return -1
      }
    })
  }

  /** The listed files the map covers: `include` (when given) minus `exclude`. */
  private inMap(files: ReadonlyArray<string>): ReadonlyArray<string> {
    const { include, exclude } = this.options
    if ((include === undefined || include.length === 0) && (exclude === undefined || exclude.length === 0)) return files
    this.mapFilter ??= {
      include: include === undefined || include.length === 0 ? undefined : ignore({ ignorecase: false }).add([...include]),
      exclude: exclude === undefined || exclude.length === 0 ? undefined : ignore({ ignorecase: false }).add([...exclude])
    }
    const { include: inc, exclude: exc } = this.mapFilter
    return files.filter((p) => ignore.isPathValid(p) && (inc === undefined || inc.ignores(p)) && (exc === undefined || !exc.ignores(p)))
  }

  private mapFilter: { readonly include: Ignore | undefined; readonly exclude: Ignore | undefined } | undefined

  private async refreshNow(hint: ReadonlySet<string> | undefined, onProgress: RefreshOptions["onProgress"]): Promise<SymbolMap> {
    const timings: Record<string, number> = {}
    const clock = phaseClock(timings)
    const realRoot = this.checkRoot()
    // A hint is only usable once a full listing exists to patch.
    const changed = hint !== undefined && this.watch !== undefined ? hint : undefined
    const listed = changed === undefined ? await this.list() : this.patchListing(changed)
    const listing = { ...listed, files: this.inMap(listed.files) }
    clock("list")
    const problems: Array<Problem> = [...listing.problems]
    const disk = this.loadDiskEntries(problems)
    const source = { realRoot, maxBytes: this.options.maxFileBytes ?? DEFAULT_MAX_INDEXED_FILE_BYTES, stats: listing.stats, disk }
    const next = new Map<string, Entry>()
    const skipped = new Map<string, Problem>()
    const jobs: Array<ParseJob> = []
    let parsed = 0
    let rehashed = 0
    let reused = 0
    let dirty = false
    for (const path of listing.files) {
      const language = languageOf(path)
      if (language === undefined) continue
      const outcome = this.scanFile(path, language, changed, source)
      if (outcome === undefined) continue
      if (outcome.kind === "skipped") {
        skipped.set(path, outcome.problem)
        problems.push(outcome.problem)
      } else if (outcome.kind === "parse") {
        dirty = true
        jobs.push(outcome.job)
      } else {
        next.set(path, outcome.entry)
        if (outcome.kind === "reused") reused++
        else {
          dirty = true
          rehashed++
        }
      }
    }
    const workers = this.options.workers === "auto" ? defaultWorkers() : (this.options.workers ?? 0)
    const extracted = await extractAll(this.parsers, jobs, workers, onProgress === undefined ? undefined : (done) => onProgress(done, jobs.length))
    for (const [i, job] of jobs.entries()) {
      const symbols = extracted[i]!
      next.set(job.path, { mtimeMs: job.mtimeMs, size: job.size, hash: job.hash, symbols })
      parsed++
      this.cache?.saveObject(objectKey(job.hash, job.language), symbols)
    }
    this.commitScan(next, skipped, { dirty, bulk: jobs.length + rehashed >= INDEX_BULK }, problems)
    // A file's parse errors are reported once per change of the file: by the refresh that
    // parsed it, not by every later one that reuses the extraction (or a new process that
    // reads it from the disk cache).
    for (const job of jobs) {
      const problem = this.parseProblem(next.get(job.path)!.symbols)
      if (problem !== undefined) problems.push(problem)
    }
    clock("scan")
    return this.buildMap(listing.files, next, problems, { files: listing.files.length, symbolFiles: next.size, parsed, rehashed, reused }, timings)
  }

  /** The root's real path; fails with a reason when the root is missing or not a directory. */
  private checkRoot(): string {
    const rootStat = (() => {
      try {
        return this.fs.stat(this.root)
      } catch (error) {
        const code = typeof error === "object" && error !== null && "code" in error ? error.code : ""
        throw new Error(code === "ENOENT" ? "the directory does not exist; pass the repository root" : describeError(error))
      }
    })()
    if (!rootStat.isDirectory()) throw new Error("not a directory; pass the repository root")
    refuseBareRepository(this.root, this.fs)
    return this.fs.realpath(this.root)
  }

  /** The on-disk cache index, read on the first refresh; a damaged one is a problem, never fatal. */
  private loadDiskEntries(problems: Array<Problem>): ReadonlyMap<string, DiskEntry> {
    if (this.diskEntries === undefined) {
      const loaded: ReturnType<SymbolCache["loadIndex"]> = this.cache?.loadIndex() ?? { entries: new Map() }
      this.diskEntries = loaded.entries
      if (loaded.problem !== undefined) problems.push({ path: `${this.options.cacheDir ?? ".strata"}/symbols/index.json`, reason: loaded.problem })
    }
    return this.diskEntries
  }

  /**
   * What one source file needs: its entry as it was (same mtime and size, or trusted
   * unchanged by the hint), an entry rebuilt without parsing (same content hash, or an
   * object in the cache), a parse, or a skip with its reason. Undefined: not a file.
   */
  private scanFile(path: string, language: Language, changed: ReadonlySet<string> | undefined, source: ScanSource): ScanOutcome | undefined {
    if (changed !== undefined && !changed.has(path)) {
      // Trusted unchanged: keep its entry, or the reason it was skipped.
      const kept = this.entries.get(path)
      const reason = this.skipped.get(path)
      if (kept !== undefined) return { kind: "reused", entry: kept }
      return reason === undefined ? undefined : { kind: "skipped", problem: reason }
    }
    const stat = statSource(this.root, path, this.fs, source.maxBytes, source.realRoot, source.stats.get(path))
    if (stat.kind === "not-a-file") return undefined
    if (stat.kind === "skipped") return { kind: "skipped", problem: { path, reason: stat.reason } }
    const prev = this.entries.get(path)
    if (prev !== undefined && prev.mtimeMs === stat.mtimeMs && prev.size === stat.size && prev.symbols.language === language) {
      return { kind: "reused", entry: prev }
    }
    const cached = prev === undefined ? source.disk.get(path) : undefined
    if (cached !== undefined && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) {
      const symbols = this.cache?.loadObject(path, objectKey(cached.hash, language))
      if (symbols !== undefined && symbols.language === language) {
        return { kind: "reused", entry: { mtimeMs: stat.mtimeMs, size: stat.size, hash: cached.hash, symbols } }
      }
    }
    const read = readSource(this.root, path, this.fs)
    if (read.kind === "skipped") return { kind: "skipped", problem: { path, reason: read.reason } }
    const hash = sha256(read.text)
    if (prev !== undefined && prev.hash === hash && prev.symbols.language === language) {
      return { kind: "rehashed", entry: { ...prev, mtimeMs: stat.mtimeMs, size: stat.size } }
    }
    // Objects are content-addressed: whatever the index says, an object for this content is reusable.
    if (this.cache !== undefined) {
      const symbols = this.cache.loadObject(path, objectKey(hash, language))
      if (symbols !== undefined && symbols.language === language) {
        return { kind: "rehashed", entry: { mtimeMs: stat.mtimeMs, size: stat.size, hash, symbols } }
      }
    }
    return { kind: "parse", job: { path, language, source: read.text, mtimeMs: stat.mtimeMs, size: stat.size, hash } }
  }

  /** Keep the scan's entries and write the cache: the parsed pack, the index when due, unused objects once. */
  private commitScan(next: Map<string, Entry>, skipped: Map<string, Problem>, change: { readonly dirty: boolean; readonly bulk: boolean }, problems: Array<Problem>): void {
    // Everything parsed in this refresh goes to disk as one pack.
    this.writeCache(problems, () => this.cache?.flush())
    const dirty = change.dirty || next.size !== this.entries.size || [...this.entries.keys()].some((p) => !next.has(p))
    this.entries = next
    this.skipped = skipped
    if (dirty || this.diskEntries?.size !== next.size) this.indexStale = true
    // Objects are written as files are parsed; the index (path → mtime, size, hash) is
    // written on the session's first change, after a bulk change, and otherwise on the
    // next quiet refresh. An index left behind only costs the next session a re-read
    // and hash of those files, never a parse.
    if (this.indexStale && (!dirty || !this.indexWritten || change.bulk)) this.writeIndex(problems)
    // Objects no file refers to are collected once per session, on its first refresh, so
    // an edit that is undone within the session finds its old object still there.
    if (!this.collected) {
      this.collected = true
      this.writeCache(problems, () => this.cache?.collect(new Set([...next.values()].map((e) => objectKey(e.hash, e.symbols.language)))))
    }
  }

  /** Write the cache index now if it lags behind (for a caller about to exit). */
  flush(): void {
    if (this.indexStale) this.writeIndex([])
  }

  private writeIndex(problems: Array<Problem>): void {
    const entries = this.entries
    this.writeCache(problems, () => {
      const index = new Map([...entries].map(([p, e]) => [p, { mtimeMs: e.mtimeMs, size: e.size, hash: e.hash }]))
      this.cache?.saveIndex(index)
      this.diskEntries = index
    })
    this.indexStale = false
    this.indexWritten = true
  }

  private writeCache(problems: Array<Problem>, write: () => void): void {
    if (this.cache === undefined || this.cacheBroken) return
    try {
      write()
    } catch (error) {
      // A cache folder that links out of the repository is refused, not worked around.
      if (error instanceof PathOutsideRepo) throw error
      this.cacheBroken = true
      problems.push({ path: `${this.options.cacheDir ?? ".strata"}/symbols`, reason: `cannot write the symbol cache (${describeError(error)}); continuing without it` })
    }
  }

  /** A config file's text, re-read only when its mtime or size changed; notes changes. */
  private readConfig(path: string): string | undefined {
    const abs = join(this.root, path)
    try {
      const stat = this.fs.stat(abs)
      const known = this.configs.get(path)
      if (known !== undefined && known.mtimeMs === stat.mtimeMs && known.size === stat.size) return known.text
      const text = stat.size > 1024 * 1024 ? undefined : this.fs.readFile(abs).toString("utf8")
      if (known?.text !== text) this.configChanged = true
      this.configs.set(path, { mtimeMs: stat.mtimeMs, size: stat.size, text })
      return text
    } catch {
      if (this.configs.delete(path)) this.configChanged = true
      return undefined
    }
  }

  /** The report entry for a file tree-sitter could not parse cleanly (built once per extraction). */
  private parseProblem(symbols: FileSymbols): Problem | undefined {
    if (symbols.errors.length === 0) return undefined
    let problem = this.parseProblems.get(symbols)
    if (problem === undefined) {
      const where = symbols.errors.map((e) => (e.line > 0 ? `line ${e.line}: ${e.message}` : e.message)).join("; ")
      problem = { path: symbols.path, reason: `parse errors (${where}); ${keptSummary(symbols)}` }
      this.parseProblems.set(symbols, problem)
    }
    return problem
  }

  /** Whether any call of the file uses one of `names` (then its resolution may change). */
  private callsUse(symbols: FileSymbols, names: ReadonlySet<string>): boolean {
    if (names.size === 0) return false
    let called = this.callNames.get(symbols)
    if (called === undefined) {
      called = new Set(symbols.calls.map((c) => c.name))
      this.callNames.set(symbols, called)
    }
    const [small, large] = names.size < called.size ? [names, called] : [called, names]
    for (const n of small) if (large.has(n)) return true
    return false
  }

  private definitions(symbols: FileSymbols): ReadonlySet<string> {
    let names = this.defs.get(symbols)
    if (names === undefined) {
      names = definedNames(symbols.symbols)
      this.defs.set(symbols, names)
    }
    return names
  }

  /** The resolution context, rebuilt only when the file list or a config file changed. */
  private context(files: ReadonlyArray<string>): { readonly ctx: ResolveContext; readonly changed: boolean } {
    const read = (path: string): string | undefined => (CONFIG_FILES.has(path.slice(path.lastIndexOf("/") + 1)) ? this.readConfig(path) : undefined)
    const previous = this.memo.ctx
    if (previous !== undefined && sameList(previous.files, files)) {
      // Re-stat the config files; a changed one forces a rebuild.
      this.configChanged = false
      for (const path of this.configs.keys()) read(path)
      if (!this.configChanged) return { ctx: previous.ctx, changed: false }
    }
    this.configChanged = false
    const ctx = buildResolveContext(files, read)
    this.memo.ctx = { files, ctx }
    return { ctx, changed: true }
  }

  private buildMap(files: ReadonlyArray<string>, entries: ReadonlyMap<string, Entry>, problems: ReadonlyArray<Problem>, counts: Omit<IndexStats, "timings">, timings: Record<string, number>): SymbolMap {
    const clock = phaseClock(timings)
    // The delta is relative to the last map returned: a refresh that fails on the way breaks the chain.
    const from = this.lastRevision
    this.lastRevision = undefined
    const symbolFiles = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    const { ctx, changed: ctxChanged } = this.context(files)
    if (ctxChanged) this.memo.ctxVersion++
    const { defs, changedNames } = this.changedDefinitions(entries)
    const resolution = this.resolveFiles(symbolFiles, entries, ctx, defs, changedNames)
    clock("resolve")
    const graph = this.patchGraph(symbolFiles, resolution, ctxChanged)
    clock("graph")
    this.aliases ??= computeAliases(symbolFiles, this.options.aliasOptions)
    const { blocks, changed } = this.blockModels(symbolFiles, resolution.resolved, graph, this.aliases)
    clock("blocks")
    const map = this.mapView({ files, symbolFiles, entries, resolved: resolution.resolved, graph, blocks, delta: from === undefined ? undefined : { from, paths: changed }, problems, stats: { ...counts, timings } })
    clock("finish")
    return map
  }

  /**
   * Every file's top-level names, and the names that appeared or disappeared anywhere
   * since the last refresh: call resolution reads other files' names, so a file whose
   * calls use a changed name is re-resolved.
   */
  private changedDefinitions(entries: ReadonlyMap<string, Entry>): { readonly defs: (path: string) => ReadonlySet<string> | undefined; readonly changedNames: ReadonlySet<string> } {
    const previousDefs = this.memo.defs
    const currentDefs = new Map<string, ReadonlySet<string>>()
    const changedNames = new Set<string>()
    for (const [path, entry] of entries) {
      const names = this.definitions(entry.symbols)
      currentDefs.set(path, names)
      const before = previousDefs.get(path)
      if (before === undefined) for (const n of names) changedNames.add(n)
      else if (before !== names) {
        for (const n of names) if (!before.has(n)) changedNames.add(n)
        for (const n of before) if (!names.has(n)) changedNames.add(n)
      }
    }
    for (const [path, names] of previousDefs) if (!currentDefs.has(path)) for (const n of names) changedNames.add(n)
    this.memo.defs = currentDefs
    return { defs: (path) => currentDefs.get(path), changedNames }
  }

  /**
   * Imports and calls of every file, reusing the last refresh's where the file, the
   * resolution context and the names its calls use are unchanged; with the graph
   * contributions that changed, so the graph is patched rather than rebuilt.
   */
  private resolveFiles(
    symbolFiles: ReadonlyArray<string>,
    entries: ReadonlyMap<string, Entry>,
    ctx: ResolveContext,
    defs: (path: string) => ReadonlySet<string> | undefined,
    changedNames: ReadonlySet<string>
  ): Resolution {
    const resolved = new Map<string, Resolved>()
    const removed: Array<Contribution> = []
    const added: Array<Contribution> = []
    for (const path of symbolFiles) {
      const symbols = entries.get(path)!.symbols
      const before = this.memo.resolved.get(path)
      let next: Resolved
      if (before !== undefined && before.symbols === symbols && before.ctxVersion === this.memo.ctxVersion) {
        if (!this.callsUse(symbols, changedNames)) {
          resolved.set(path, before)
          continue
        }
        const calls = resolveCalls(symbols, before.imports, ctx, defs)
        next = { ...before, calls, contribution: fileContribution({ path, imports: before.imports, calls }) }
      } else {
        const imports = resolveImports(symbols, ctx)
        const calls = resolveCalls(symbols, imports, ctx, defs)
        next = { symbols, ctxVersion: this.memo.ctxVersion, imports, calls, contribution: fileContribution({ path, imports, calls }) }
      }
      resolved.set(path, next)
      if (before !== undefined) removed.push(before.contribution)
      added.push(next.contribution)
    }
    for (const [path, before] of this.memo.resolved) if (!entries.has(path)) removed.push(before.contribution)
    return { resolved, removed, added }
  }

  /** The reference graph: kept, patched with the changed contributions, or rebuilt after a large change. */
  private patchGraph(symbolFiles: ReadonlyArray<string>, { resolved, removed, added }: Resolution, ctxChanged: boolean): ReferenceGraph {
    const previousGraph = this.memo.graph
    const graph =
      previousGraph === undefined || ctxChanged || added.length + removed.length > symbolFiles.length / 4
        ? graphFromContributions(symbolFiles.map((path) => resolved.get(path)!.contribution))
        : added.length === 0 && removed.length === 0
          ? previousGraph
          : updateGraph(previousGraph, removed, added, symbolFiles)
    this.memo.resolved = resolved
    this.memo.graph = graph
    return graph
  }

  /**
   * Every file's block model and hash, reused while its resolution and reference counts
   * are unchanged; with the paths whose hash differs from the last refresh's (or that
   * appeared or left), the snapshot's `delta`.
   */
  private blockModels(
    symbolFiles: ReadonlyArray<string>,
    resolved: ReadonlyMap<string, Resolved>,
    graph: ReferenceGraph,
    aliases: ReadonlyArray<PathAlias>
  ): { readonly blocks: ReadonlyMap<string, BlockMemo>; readonly changed: ReadonlySet<string> } {
    const format = this.options.format ?? {}
    const previous = this.memo.blocks
    const blocks = new Map<string, BlockMemo>()
    const changed = new Set<string>()
    for (const path of symbolFiles) {
      const r = resolved.get(path)!
      const refs = graph.fileRefs.get(path) ?? 0
      const symbolRefs = graph.symbolRefs.get(path)
      const before = previous.get(path)
      if (before !== undefined && before.resolved === r && before.refs === refs && sameCounts(before.symbolRefs, symbolRefs)) {
        blocks.set(path, before)
        continue
      }
      const model = blockModel(
        {
          path,
          symbols: r.symbols.symbols,
          refs,
          ...(symbolRefs === undefined ? {} : { symbolRefs }),
          external: r.imports.external,
          local: r.imports.local,
          calls: callTargets(r.calls)
        },
        aliases,
        format
      )
      const hash = blockHash(model)
      if (before?.hash !== hash) changed.add(path)
      blocks.set(path, { resolved: r, refs, symbolRefs, model, hash, text: undefined })
    }
    for (const path of previous.keys()) if (!blocks.has(path)) changed.add(path)
    this.memo.blocks = blocks
    return { blocks, changed }
  }

  /** The `SymbolMap` over one refresh's results: texts rendered, ranks and components computed on first use. */
  private mapView(parts: MapParts): SymbolMap {
    const { files, symbolFiles, entries, resolved, graph, blocks } = parts
    const aliases = this.aliases!
    const format = this.options.format ?? {}
    const block = (path: string): string | undefined => {
      const memo = blocks.get(path)
      if (memo === undefined) return undefined
      memo.text ??= renderBlock(memo.model)
      return memo.text
    }
    // Scores, ranking and components are computed on first use and kept while the graph is unchanged.
    const rank = (): NonNullable<Memo["rank"]> => {
      if (this.memo.rank === undefined || this.memo.rank.graph !== graph) {
        const scores = pageRank(graph)
        this.memo.rank = { graph, scores, ranked: rankFiles(symbolFiles, scores), components: connectedComponents(graph, symbolFiles) }
      }
      return this.memo.rank
    }
    const legend = formatLegend(aliases, format)
    if (this.memo.tree === undefined || !sameList(this.memo.tree.files, files)) {
      const fileTree = formatFileTree(files)
      this.memo.tree = { files, text: fileTree, hash: sha256(fileTree) }
    }
    const tree = this.memo.tree
    // Each map is a new revision; it names what changed since the previous one this indexer built.
    const revision = {}
    this.lastRevision = revision
    if (this.memo.refCounts?.graph !== graph) this.memo.refCounts = { graph, counts: new Map([...graph.fileRefs].filter(([path]) => entries.has(path))) }
    const refCounts = this.memo.refCounts.counts
    const render = (exclude: ReadonlySet<string> = new Set()): string =>
      renderMap(
        legend,
        symbolFiles.filter((p) => !exclude.has(p)).map((p) => block(p)!)
      )
    const budgeted = (options: BudgetOptions): BudgetedMap => {
      const count = options.countTokens ?? estimateTokens
      const exclude = options.exclude ?? new Set<string>()
      const candidates = rank().ranked.filter((p) => !exclude.has(p))
      const cut = budgetedMap({
        ranked: candidates,
        aliases,
        block: (p) => ({ text: block(p)!, aliases: blocks.get(p)?.model.aliases.map(([token]) => token) ?? [] }),
        legend: (used) => formatLegend(used, format),
        count,
        budgetTokens: options.budgetTokens,
        previous: this.previousSelection
      })
      if (cut.files.length > 0 || cut.fits) this.previousSelection = new Set(cut.files)
      return { ...cut, omitted: candidates.length - cut.files.length }
    }
    return {
      // The previous map's list when the files are the same, so consumers can compare by identity.
      files: tree.files,
      symbolFiles,
      revision,
      delta: parts.delta,
      block,
      blockHash: (path) => blocks.get(path)?.hash,
      legend,
      fileTree: tree.text,
      fileTreeHash: tree.hash,
      get components() {
        return rank().components
      },
      refCounts,
      problems: [...parts.problems].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.reason < b.reason ? -1 : 1)),
      aliases,
      graph,
      get scores() {
        return rank().scores
      },
      get ranked() {
        return rank().ranked
      },
      rankFor(focus) {
        return focusRanking(referenceData(this), focus)
      },
      symbols: (path) => entries.get(path)?.symbols,
      model: (path) => blocks.get(path)?.model,
      imports: (path) => resolved.get(path)?.imports,
      calls: (path) => resolved.get(path)?.calls,
      render,
      budgeted,
      stats: parts.stats
    }
  }
}

/** One refresh's call and import resolution, with the graph contributions that changed. */
interface Resolution {
  readonly resolved: ReadonlyMap<string, Resolved>
  readonly removed: ReadonlyArray<Contribution>
  readonly added: ReadonlyArray<Contribution>
}

/** What `mapView` shows. */
interface MapParts {
  readonly files: ReadonlyArray<string>
  readonly symbolFiles: ReadonlyArray<string>
  readonly entries: ReadonlyMap<string, Entry>
  readonly resolved: ReadonlyMap<string, Resolved>
  readonly graph: ReferenceGraph
  readonly blocks: ReadonlyMap<string, BlockMemo>
  /** What changed since the last map returned (`SymbolMapSnapshot.delta`), unless the chain broke. */
  readonly delta: SymbolMapDelta | undefined
  readonly problems: ReadonlyArray<Problem>
  readonly stats: IndexStats
}

interface Resolved {
  readonly symbols: FileSymbols
  readonly ctxVersion: number
  readonly imports: ResolvedImports
  readonly calls: ReadonlyArray<ResolvedCall>
  readonly contribution: Contribution
}

interface BlockMemo {
  readonly resolved: Resolved
  readonly refs: number
  readonly symbolRefs: ReadonlyMap<string, number> | undefined
  readonly model: BlockModel
  readonly hash: string
  text: string | undefined
}

/** What the indexer keeps between refreshes so unchanged files cost nothing. */
interface Memo {
  ctx: { readonly files: ReadonlyArray<string>; readonly ctx: ResolveContext } | undefined
  ctxVersion: number
  defs: ReadonlyMap<string, ReadonlySet<string>>
  resolved: ReadonlyMap<string, Resolved>
  graph: ReferenceGraph | undefined
  blocks: ReadonlyMap<string, BlockMemo>
  rank:
    | {
        readonly graph: ReferenceGraph
        readonly scores: ReadonlyMap<string, number>
        readonly ranked: ReadonlyArray<string>
        readonly components: ReadonlyArray<ReadonlyArray<string>>
      }
    | undefined
  tree: { readonly files: ReadonlyArray<string>; readonly text: string; readonly hash: string } | undefined
  refCounts: { readonly graph: ReferenceGraph; readonly counts: ReadonlyMap<string, number> } | undefined
}

const emptyMemo = (): Memo => ({
  ctx: undefined,
  ctxVersion: 0,
  defs: new Map(),
  resolved: new Map(),
  graph: undefined,
  blocks: new Map(),
  rank: undefined,
  tree: undefined,
  refCounts: undefined
})

/** Equal per-symbol counts (the graph shares unchanged maps, so identity usually decides). */
const sameCounts = (a: ReadonlyMap<string, number> | undefined, b: ReadonlyMap<string, number> | undefined): boolean => {
  if (a === b) return true
  if (a === undefined || b === undefined || a.size !== b.size) return false
  for (const [k, v] of a) if (b.get(k) !== v) return false
  return true
}

const sameNumbers = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): boolean => a.length === b.length && a.every((x, i) => x === b[i])

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  if (a === b) return true
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Resolved call targets per caller, deduped in first-call order (top-level calls have no caller). */
const callTargets = (calls: ReadonlyArray<ResolvedCall>): Map<string, Array<string>> => {
  const out = new Map<string, Array<string>>()
  for (const call of calls) {
    if (call.caller === "") continue
    const list = out.get(call.caller)
    if (list === undefined) out.set(call.caller, [call.name])
    else if (!list.includes(call.name)) list.push(call.name)
  }
  return out
}

/** Records elapsed milliseconds per phase into `timings` (diagnostics only). */
const phaseClock = (timings: Record<string, number>): ((phase: string) => void) => {
  let last = performance.now()
  return (phase) => {
    const now = performance.now()
    timings[phase] = Math.round((now - last) * 100) / 100
    last = now
  }
}
