// The vitest settings every package shares; a package's vitest.config.ts merges what only
// it needs (a global setup, longer timeouts). Tests live under test/, workspace imports
// resolve to the packages' sources (the `@strata/source` export condition).
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@strata/source"] },
  ssr: { resolve: { conditions: ["@strata/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    // Property tests draw from one fixed seed (FC_SEED=<n> or FC_SEED=random to explore).
    setupFiles: [fileURLToPath(new URL("./packages/test-support/src/fastCheckSeed.ts", import.meta.url))],
    testTimeout: 30_000,
    pool: "threads",
    // A worker imports the packages once and runs its test files one after another: the
    // import of Effect and the sources was half of the suite's CPU when every file re-imported
    // them. Test files therefore must not leave global state behind (env, timers, globals).
    isolate: false
  }
})
