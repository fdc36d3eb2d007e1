import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@strata/source"] },
  ssr: { resolve: { conditions: ["@strata/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    // Builds dist/ (and stale dependencies) before the end-to-end tests spawn dist/bin.js.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "threads"
  }
})
