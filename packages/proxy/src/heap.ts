/**
 * How the proxy's process sizes its heap. `runProxy` (what `strata proxy` runs) applies it;
 * a program that embeds `startProxy` in its own process decides for itself.
 *
 * V8 starts a full collection when the old generation has grown by a factor it derives
 * from how fast it marks against how fast the program allocates. The proxy's old
 * generation holds the caches of what sessions sent before (tens of MB, marked quickly)
 * and grows by a few MB a second, so V8 settles on its smallest factor (1.1): a full
 * collection every half second or so, each stopping the process for 10-20 ms. A request
 * that arrives during one waits for it, and those pauses were most of the proxy's p99.
 * A fixed factor of 2 (within V8's own range, 1.1 to 4) makes them several times rarer,
 * and the marking they save is CPU every request shared. bench/proxy measures both.
 */
import { setFlagsFromString } from "node:v8"

/** The V8 flags `tuneHeapForProxy` sets; the same as `node --heap-growing-percent=100`. */
export const PROXY_HEAP_FLAGS: ReadonlyArray<string> = ["--heap-growing-percent=100"]

/**
 * Apply `PROXY_HEAP_FLAGS` to this process. It changes how the whole process collects
 * garbage, so call it in a process whose main job is the proxy (as `runProxy` does).
 * V8 reads this flag at every collection, so setting it after start takes effect.
 *
 * @example
 * ```ts no-run
 * import { startProxy, tuneHeapForProxy } from "@strata/proxy"
 * tuneHeapForProxy()
 * const proxy = await startProxy({ port: 8787 })
 * ```
 */
export const tuneHeapForProxy = (): void => {
  for (const flag of PROXY_HEAP_FLAGS) setFlagsFromString(flag)
}
