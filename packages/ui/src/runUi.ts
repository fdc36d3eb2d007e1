/**
 * `strata ui`: serve the dashboard over a repository's store until interrupted, on
 * loopback unless told otherwise, and open it in the browser on request. The CLI command
 * parses its flags and calls `runUi`.
 */
import { spawn } from "node:child_process"
import { sessionKeyFor } from "@strata/store"
import { StateStore, type PathOutsideRepo, type StateStoreError } from "@strata/core/effect"
import { Context, Effect, Layer, Schema } from "effect"
import { storeSessionCatalog, type SessionCatalog } from "./catalog.ts"

/** The repository identity under which `strata proxy` keeps its sessions (`@strata/proxy`'s `PROXY_REPOSITORY`). */
export const PROXY_REPOSITORY = "strata-proxy"
import { serveDashboard } from "./server.ts"

/** The dashboard could not start (a port in use, a host that is not an address). */
export class UiError extends Schema.TaggedError<UiError>()("UiError", {
  host: Schema.String,
  port: Schema.Number,
  reason: Schema.String
}) {
  override get message(): string {
    return `The dashboard could not listen on ${this.host}:${this.port}: ${this.reason}. Choose another port with --port (0 picks a free one).`
  }
}

/** Options of `runUi`. */
export interface UiOptions {
  readonly repoRoot: string
  /** The repository's store (the one `strata chat` and the Promise API commit to). */
  readonly store: Layer.Layer<StateStore, StateStoreError | PathOutsideRepo>
  /**
   * Repository identities besides the repository's own whose sessions to list too.
   * Default: the proxy's (`strata-proxy`), so sessions `strata proxy` recorded in this
   * store show beside the CLI's and the application's.
   */
  readonly alsoRepositories?: ReadonlyArray<string> | undefined
  /** The repository's configured identity, when it has one (see `sessionKeyFor`). */
  readonly repositoryId?: string | undefined
  /** Default 0: any free port. */
  readonly port?: number | undefined
  /** Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** Open the page in the system's browser. */
  readonly open?: boolean | undefined
  /** Told the page's address once the server listens. */
  readonly announce: (url: string) => Effect.Effect<void>
}

/** Open `url` with the platform's opener; failures are ignored (the address is printed anyway). */
export const openInBrowser = (url: string): void => {
  const [command, args] = process.platform === "darwin" ? ["open", [url]] : process.platform === "win32" ? ["cmd", ["/c", "start", "", url]] : ["xdg-open", [url]]
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true })
    child.on("error", () => undefined)
    child.unref()
  } catch {
    // No opener on this machine: the printed address is enough.
  }
}

/**
 * Serve the dashboard until the fiber is interrupted (Ctrl-C in the CLI).
 *
 * @example
 * ```ts no-run
 * import { Effect } from "effect"
 * import { FileStateStore } from "@strata/store"
 * import { runUi } from "@strata/ui"
 * await Effect.runPromise(runUi({
 *   repoRoot: ".", store: FileStateStore.layer({ repoRoot: "." }),
 *   announce: (url) => Effect.sync(() => console.log(url))
 * }))
 * ```
 */
export const runUi = (options: UiOptions): Effect.Effect<void, UiError | StateStoreError | PathOutsideRepo> =>
  Effect.scoped(
    Effect.gen(function* () {
      // Built in this scope, so a pooled store (PostgreSQL) stays open while the server runs.
      const store = Context.get(yield* Layer.build(options.store), StateStore)
      const own = yield* sessionKeyFor(options.repoRoot, { repositoryId: options.repositoryId, create: false })
      const catalog: SessionCatalog = storeSessionCatalog(store, [own.repository, ...(options.alsoRepositories ?? [PROXY_REPOSITORY])])
      const host = options.host ?? "127.0.0.1"
      const port = options.port ?? 0
      const server = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => serveDashboard({ store, catalog, host, port }),
          catch: (error) => new UiError({ host, port, reason: error instanceof Error ? error.message : String(error) })
        }),
        (s) => Effect.promise(() => s.close())
      )
      yield* options.announce(server.url)
      if (options.open === true) openInBrowser(server.url)
      return yield* Effect.never
    })
  )
