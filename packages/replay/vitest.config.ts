import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.ts"

// Replays run whole sessions (a demo history under every strategy): longer timeouts.
export default mergeConfig(shared, {
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000
  }
})
