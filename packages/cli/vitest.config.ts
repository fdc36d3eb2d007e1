import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.ts"

export default mergeConfig(shared, {
  test: {
    // Builds dist/ (and stale dependencies) before the end-to-end tests spawn dist/bin.js.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000
  }
})
