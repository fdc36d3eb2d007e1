import { describe, expect, it } from "vitest"
import type { NeutralRequest } from "@strata/core"
import { canonicalize, cleanParts, lookupModel, placeAnthropic, planBreakpoints, prefixTokens, serializeBody } from "../src/index.ts"
import { parseDataUrl } from "../src/rules/content.ts"
import { messageTokens } from "../src/rules/prefix.ts"
import { seedRequest } from "./plugins-fixtures.ts"

const limits = lookupModel("anthropic", "claude-sonnet-4-5")

describe("content rules", () => {
  it("drops blank text parts and blank string content", () => {
    expect(cleanParts({ role: "user", content: " \n\t" })).toEqual([])
    expect(cleanParts({ role: "user", content: [{ type: "text", text: "" }, { type: "image", url: "data:image/png;base64,AA" }] })).toEqual([{ type: "image", url: "data:image/png;base64,AA" }])
  })

  it("parses data URLs", () => {
    expect(parseDataUrl("data:image/png;base64,AAEC")).toEqual({ mediaType: "image/png", base64: "AAEC" })
    expect(parseDataUrl("https://x/y.png")).toBeUndefined()
  })
})

describe("prefix tokens", () => {
  it("uses each block's measured tokens at block ends", () => {
    const req = seedRequest("m", { L0: { tokens: 1234 }, L1: { tokens: 777 } })
    const prefix = prefixTokens(req, 100)
    expect(prefix[0]).toBe(1334)
    expect(prefix[2]).toBe(1334 + 777)
    expect(messageTokens(req).reduce((a, b) => a + b, 0)).toBe(req.blocks.reduce((a, b) => a + b.tokens, 0))
  })

  it("tools assembly counted (toolTokens, inside the first block's tokens) lead the prefix once", () => {
    const req = seedRequest("m", { L0: { tokens: 1234 }, L1: { tokens: 777 } })
    const tools = [{ name: "read_file", description: "Read a file", inputSchema: { type: "object" as const } }]
    const withTools: NeutralRequest = { ...req, tools, toolTokens: 200 }
    // The plugin's leading tokens are the request's own count of the tools: L0 ends where its block does.
    const prefix = prefixTokens(withTools, 200)
    expect(prefix[0]).toBe(1234)
    expect(prefix[2]).toBe(1234 + 777)
    const placed = placeAnthropic(withTools)
    expect(placed.breakpoints.map((b) => b.prefixTokens)).toEqual([1234, 1234 + 777])
  })

  it("estimates when blocks do not line up with messages", () => {
    const req: NeutralRequest = { model: "m", blocks: [], breakpoints: [], messages: [{ role: "user", content: "x".repeat(400) }, { role: "user", content: [{ type: "image", url: "https://a/b.png" }] }] }
    expect(prefixTokens(req)).toEqual([100, 1100])
  })
})

describe("planBreakpoints", () => {
  it("reports out-of-range and duplicate marks", () => {
    const req = seedRequest("claude-sonnet-4-5", { L0: { tokens: 3000 } })
    const plan = planBreakpoints({ ...req, breakpoints: [...req.breakpoints, { tier: "L1", messageIndex: 99 }, { tier: "L2", messageIndex: 0 }] }, { limits })
    expect(plan.breakpoints.map((b) => b.tier)).toEqual(["L0"])
    expect(plan.dropped.map((d) => d.reason)).toEqual([
      expect.stringMatching(/marks the same message \(0\) as the L0 breakpoint/),
      expect.stringMatching(/message index 99 is outside the request's 4 messages/)
    ])
  })

  it("a merged breakpoint hands its longer TTL to the one that absorbs it", () => {
    const req = seedRequest("claude-sonnet-4-5", { L0: { tokens: 6000 }, L1: { tokens: 1500, ttl: "1h" }, L2: { tokens: 5000 } })
    const plan = planBreakpoints(req, { limits, maxBreakpoints: 2 })
    expect(plan.breakpoints.map((b) => [b.tier, b.ttl])).toEqual([["L0", "1h"], ["L2", "1h"]])
    expect(plan.dropped[0]).toMatchObject({ tier: "L1" })
  })

  it("drops everything when no slot is left, and caps nothing in automatic mode", () => {
    const req = seedRequest("claude-sonnet-4-5", { L0: { tokens: 3000 }, L1: { tokens: 3000 } })
    expect(planBreakpoints(req, { limits, maxBreakpoints: 1, reservedSlots: 1, reservedFor: "x" }).dropped.map((d) => d.reason)).toEqual([
      expect.stringMatching(/no marker slots left/),
      expect.stringMatching(/no marker slots left/)
    ])
    expect(planBreakpoints(req, { limits, maxBreakpoints: 0, mode: "automatic" }).breakpoints).toHaveLength(2)
  })

  it("uses the minimum as of the asked date", () => {
    const req = seedRequest("claude-sonnet-4-6", { L0: { tokens: 1500 } })
    expect(planBreakpoints(req, { limits: lookupModel("anthropic", "claude-sonnet-4-6") }).breakpoints).toHaveLength(1)
    const old = planBreakpoints(req, { limits: lookupModel("anthropic", "claude-sonnet-4-6", { asOf: "2026-03" }) })
    expect(old.dropped[0]!.reason).toMatch(/2048-token minimum for Claude Sonnet 4.6 \(X4, 2026-02\)/)
  })
})

describe("serialization", () => {
  it("canonicalize sorts keys deeply and drops undefined", () => {
    expect(JSON.stringify(canonicalize({ b: 1, a: { d: [{ y: 1, x: 2 }], c: undefined } }))).toBe('{"a":{"d":[{"x":2,"y":1}]},"b":1}')
  })

  it("serializeBody writes bytes as base64", () => {
    expect(serializeBody({ bytes: new Uint8Array([255, 0]) })).toBe('{"bytes":"/wA="}')
  })
})
