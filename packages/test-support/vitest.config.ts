import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@strata/source"] },
  ssr: { resolve: { conditions: ["@strata/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    pool: "threads"
  }
})
