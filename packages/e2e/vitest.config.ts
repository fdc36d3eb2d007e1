import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.ts"

export default mergeConfig(shared, {
  test: {
    // Builds the packages' dist/ for the child processes, and starts a throwaway
    // PostgreSQL cluster unless STRATA_TEST_PG_URL names one.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000
  }
})
