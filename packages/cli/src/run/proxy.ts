/**
 * `strata proxy` with the dashboard at `/`: the proxy (`@strata/proxy`) forwards provider
 * paths and serves what it does not know to a fallback handler; the CLI gives it
 * `@strata/ui`'s `dashboardHandler` over the same store, so the page of `strata ui` is at
 * the proxy's address while an agent runs through it. Neither package knows the other.
 */
import { StateStore } from "@strata/core/effect"
import type { RunProxyOptions } from "@strata/proxy"
import { storeLayer } from "@strata/store"
import { Effect, Layer, ManagedRuntime } from "effect"

/** Options of `runProxyWithDashboard`: the proxy's, with the store as a `STRATA_STORE` setting. */
export interface ProxyWithDashboardOptions extends Omit<RunProxyOptions, "store" | "handler"> {
  /** `file` (default), `memory` or `postgres://...`. */
  readonly store?: string | undefined
}

const signals = (): Promise<void> =>
  new Promise((resolve) => {
    const on = () => {
      process.off("SIGINT", on)
      process.off("SIGTERM", on)
      resolve()
    }
    process.on("SIGINT", on)
    process.on("SIGTERM", on)
  })

/**
 * Run the proxy until a signal (or `until`), the dashboard mounted at `/` over the proxy's
 * store (one store for both, so a memory store shows its sessions too).
 */
export const runProxyWithDashboard = async (options: ProxyWithDashboardOptions): Promise<void> => {
  const [{ runProxy }, { dashboardHandler, storeSessionCatalog }] = await Promise.all([import("@strata/proxy"), import("@strata/ui")])
  const runtime = ManagedRuntime.make(storeLayer(options.store ?? "file", { repoRoot: options.stateRoot ?? process.cwd() }))
  try {
    const store = await runtime.runPromise(Effect.gen(function* () {
      return yield* StateStore
    }))
    const dashboard = dashboardHandler({ store, catalog: storeSessionCatalog(store), hosts: [options.host ?? "127.0.0.1"] })
    // The dashboard's event streams end first, so the proxy's close does not wait on them.
    const until = (options.until ?? signals()).finally(() => dashboard.close())
    await runProxy({ ...options, store: Layer.succeed(StateStore, store), handler: dashboard, until })
  } finally {
    await runtime.dispose()
  }
}
