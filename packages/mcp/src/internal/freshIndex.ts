// The index behind the tools, kept warm and fresh: one watcher per directory of the file
// tree notes what changed, and a call re-indexes exactly those files first (a changed or
// deleted file through the indexer's hints; a new file or directory, a .gitignore, or too
// many changes through a full refresh, which applies the ignore rules). Where watching is
// not possible (too many directories, a watcher error) every call runs the indexer's
// mtime-and-size check instead.
import { SymbolIndexer, type SymbolMap } from "@strata/symbols"
import { Effect, type Scope } from "effect"
import { type FSWatcher, lstatSync, watch } from "node:fs"
import { RepositoryUnavailable } from "./errors.ts"

/** More directories than this: no watchers (inotify watches are a per-user limit), mtime checks instead. */
const MAX_WATCHED_DIRS = 4000
/** More pending paths than this: one full refresh instead of hints. */
const MAX_HINTS = 256

export interface FreshIndex {
  /** The map, with every change seen since the last call indexed. */
  readonly snapshot: Effect.Effect<SymbolMap, RepositoryUnavailable>
  /** Whether watchers are active (false: each call runs the mtime check). */
  readonly watching: () => boolean
}

const ancestors = (files: ReadonlyArray<string>): Set<string> => {
  const dirs = new Set<string>([""])
  for (const f of files) {
    for (let i = f.indexOf("/"); i >= 0; i = f.indexOf("/", i + 1)) dirs.add(f.slice(0, i))
  }
  return dirs
}

export const makeFreshIndex = (root: string, options: { readonly cache: boolean }): Effect.Effect<FreshIndex, RepositoryUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const failed = (error: unknown) => new RepositoryUnavailable({ root, reason: error instanceof Error ? error.message : String(error) })
    const indexer = yield* Effect.tryPromise({ try: () => SymbolIndexer.create(root, { cache: options.cache }), catch: failed })
    let last = yield* Effect.tryPromise({ try: () => indexer.refresh(), catch: failed })
    const watchers = new Map<string, FSWatcher>()
    let watching = true
    let pending = new Set<string>()
    let everything = false
    const stopAll = (): void => {
      for (const w of watchers.values()) w.close()
      watchers.clear()
    }
    const sync = (files: ReadonlyArray<string>): void => {
      if (!watching) return
      const dirs = ancestors(files)
      if (dirs.size > MAX_WATCHED_DIRS) {
        watching = false
        stopAll()
        return
      }
      for (const [dir, w] of watchers) {
        if (!dirs.has(dir)) {
          w.close()
          watchers.delete(dir)
        }
      }
      for (const dir of dirs) {
        if (watchers.has(dir)) continue
        try {
          const w = watch(dir === "" ? root : `${root}/${dir}`, { persistent: false }, (_event, name) => {
            if (name === null) everything = true
            else pending.add(dir === "" ? name : `${dir}/${name}`)
          })
          // A watcher that fails (its directory removed) asks for a full refresh.
          w.on("error", () => {
            everything = true
            w.close()
            watchers.delete(dir)
          })
          watchers.set(dir, w)
        } catch {
          everything = true
        }
      }
    }
    sync(last.files)
    yield* Effect.addFinalizer(() => Effect.sync(stopAll))

    const known = (map: SymbolMap) => new Set(map.files)
    let knownFiles = known(last)
    const refresh = Effect.tryPromise({
      try: async () => {
        // Watcher events for writes that finished before this call are read in this turn of the event loop.
        await new Promise<void>((resolve) => setImmediate(resolve))
        if (!watching) {
          last = await indexer.refresh()
          return last
        }
        if (!everything && pending.size === 0) return last
        const paths = [...pending].filter((p) => p !== ".git" && !p.startsWith(".git/") && p !== ".strata" && !p.startsWith(".strata/"))
        let full = everything || paths.length > MAX_HINTS
        pending = new Set()
        everything = false
        if (!full) {
          for (const path of paths) {
            // New files and directories, and ignore rules, need the full listing.
            if (!knownFiles.has(path) || path.endsWith(".gitignore")) {
              full = true
              break
            }
            try {
              if (lstatSync(`${root}/${path}`).isDirectory()) full = true
            } catch {
              // Deleted: a hint removes it.
            }
          }
        }
        if (full || paths.length > 0) {
          last = await indexer.refresh(full ? {} : { changed: paths })
          knownFiles = known(last)
          if (full) sync(last.files)
        }
        return last
      },
      catch: failed
    })
    return { snapshot: refresh, watching: () => watching } satisfies FreshIndex
  })
