import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@strata/source"] },
  ssr: { resolve: { conditions: ["@strata/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    // Builds the packages' dist/ for the child processes, and starts a throwaway
    // PostgreSQL cluster unless STRATA_TEST_PG_URL names one.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: "threads"
  }
})
