import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.ts"

export default mergeConfig(shared, {
  test: {
    // Bundles the page (dist/page) once; the browser tests need it.
    globalSetup: ["test/globalSetup.ts"],
    // Browser tests: generous, since a shared CI machine can be slow; they take seconds alone.
    testTimeout: 180_000,
    // The page tests record three sessions and start Chromium before the first test: over
    // two minutes when the test command runs every suite at once on 2 cores.
    hookTimeout: 300_000
  }
})
