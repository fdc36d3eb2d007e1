import { availableParallelism } from "node:os"
import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.ts"

export default mergeConfig(shared, {
  test: {
    // Builds dist/ (and stale dependencies) before the end-to-end tests spawn dist/bin.js.
    globalSetup: ["test/globalSetup.ts"],
    // The longest suite of the test command (scripts/test.mjs starts it first): one worker
    // per core (vitest's default leaves one core idle), since many cases wait on child
    // processes and servers rather than compute.
    maxWorkers: availableParallelism(),
    testTimeout: 60_000,
    hookTimeout: 120_000
  }
})
