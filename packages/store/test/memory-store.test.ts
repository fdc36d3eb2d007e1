// The in-memory store runs the conformance suite's in-process half (it has no other processes to share with).
import { MemoryStateStore } from "@strata/core/effect"
import { conformance } from "./conformance.ts"

const layer = MemoryStateStore.layer

conformance({ name: "memory store", layer: () => layer })
