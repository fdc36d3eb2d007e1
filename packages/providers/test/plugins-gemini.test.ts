import { describe, expect, it } from "vitest"
import { placeGemini } from "../src/index.ts"
import { bigRequest, seedRequest } from "./plugins-fixtures.ts"

describe("gemini plugin", () => {
  it("implicit: systemInstruction, user/model contents, no cache fields", () => {
    const r = placeGemini(bigRequest("gemini-2.5-flash"), { maxTokens: 100 })
    expect(r.body.config?.systemInstruction?.parts).toHaveLength(1)
    expect(r.body.config?.cachedContent).toBeUndefined()
    expect(r.body.config?.maxOutputTokens).toBe(100)
    expect(r.body.contents.map((c) => c.role)).toEqual(["user", "model", "user", "model", "user", "model", "user", "model", "user"])
    expect(r.breakpoints[0]!.location).toBe("config.systemInstruction (implicit prefix)")
    expect(r.cache).toBeUndefined()
  })

  it("uses the dated minimum: 2.5 Flash was 1024 in 2025 and 2048 from 2026-07", () => {
    const req = seedRequest("gemini-2.5-flash", { L0: { tokens: 1500 } })
    expect(placeGemini(req).dropped.map((d) => d.tier)).toEqual(["L0"])
    expect(placeGemini(req, { asOf: "2025-06" }).dropped).toEqual([])
  })

  it("explicit: describes the cache for the cached tiers, then references it and sends only the rest", () => {
    const req = bigRequest("gemini-2.5-pro")
    const first = placeGemini(req, { explicitCache: {} })
    expect(first.cache?.used).toBe(false)
    expect(first.cache?.create.config.contents).toHaveLength(6)
    expect(first.cache?.create.config.ttl).toBe("3600s")
    expect(first.cache?.create.config.displayName).toBe(`strata-${first.cache?.key}`)
    expect(first.body.contents).toHaveLength(9)
    // One cache reference per request: only the last tier's breakpoint stays.
    expect(first.breakpoints.map((b) => b.tier)).toEqual(["L3"])
    expect(first.dropped.map((d) => d.tier).sort()).toEqual(["L0", "L1", "L2"])

    const second = placeGemini(req, { explicitCache: { name: "cachedContents/xyz", ttlSeconds: 600 } })
    expect(second.cache?.used).toBe(true)
    expect(second.cache?.key).toBe(first.cache?.key)
    expect(second.body.config).toEqual({ cachedContent: "cachedContents/xyz" })
    expect(second.body.contents).toHaveLength(3)
    expect(second.cache?.create.config.ttl).toBe("600s")
  })

  it("falls back to implicit where explicit caches are not supported", () => {
    const r = placeGemini(bigRequest("gemini-4-argon"), { explicitCache: { name: "cachedContents/x" } })
    expect(r.body.config?.cachedContent).toBeUndefined()
    expect(r.notes[0]).toMatch(/does not support cachedContents/)
  })
})
