// assembleTieredMessages: the tiered layout's pure entry point (docs/pipeline.md#the-tiered-layout),
// checked byte for byte against the verified message array of the reference implementation.
import { describe, expect, it } from "vitest"
import { assembleTieredMessages, type SeedMessage } from "../src/index.ts"
import { neutralRequest, sectionOf } from "../src/assembly/parts.ts"
import { tieredLayout } from "../src/pipeline/seed/seed.ts"
import { toSeedMessage } from "../src/pipeline/seed/seedPlacement.ts"
import { charCounter } from "./pipeline-stubs.ts"

const DESC =
  "Below is a map of the repository showing classes, functions, and their relationships.\nUse this to understand the codebase structure and find relevant code."
const CC = { type: "ephemeral" } as const
const cached = (role: SeedMessage["role"], text: string): SeedMessage => ({ role, content: [{ type: "text", text, cache_control: CC }] })

describe("assembleTieredMessages", () => {
  it("lays out every section with the exact header bytes, acknowledged only before the conversation", () => {
    const messages = assembleTieredMessages({
      systemPrompt: "SYS",
      symbolLegend: "LEGEND",
      tieredContent: {
        L0: { symbols: "L0SYM", files: "a.py\n```\nA\n```", history: [{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }] },
        L1: { symbols: "L1SYM", files: "b.py\n```\nB\n```" },
        L2: { history: [{ role: "user", content: "q1" }, { role: "assistant", content: "a1" }] },
        L3: { files: "c.py\n```\nC\n```" }
      },
      fileTree: "TREE",
      urlContext: ["URL1", "URL2"],
      reviewContext: "REVIEW",
      activeFiles: "src/x.py\n```\nprint(1)\n```",
      activeHistory: [{ role: "user", content: "q2" }, { role: "assistant", content: "a2" }],
      prompt: "NOW",
      systemReminder: "REMINDER"
    })
    expect(messages).toEqual([
      {
        role: "system",
        content: `SYS\n\n# Repository Structure\n\n${DESC}\n\nLEGEND\n\nL0SYM\n\n# Reference Files (Stable)\n\nThese files are included for reference:\n\na.py\n\`\`\`\nA\n\`\`\``
      },
      { role: "user", content: "q0" },
      cached("assistant", "a0"),
      // After the first history message no section has a synthetic acknowledgement: a
      // cached tier's breakpoint sits on its user message, the active sections follow the
      // active history and ride with the prompt.
      cached("user", "# Repository Structure (continued)\n\nL1SYM\n\n# Reference Files\n\nThese files are included for reference:\n\nb.py\n```\nB\n```"),
      { role: "user", content: "q1" },
      cached("assistant", "a1"),
      cached("user", "# Reference Files (L3)\n\nThese files are included for reference:\n\nc.py\n```\nC\n```"),
      { role: "user", content: "# Repository Files\n\nComplete list of files in the repository:\n\nTREE" },
      { role: "user", content: "q2" },
      { role: "assistant", content: "a2" },
      { role: "user", content: "# URL Context\n\nThe following content was fetched from URLs mentioned in the conversation:\n\nURL1\n---\nURL2" },
      { role: "user", content: "# Code Review Context\n\nREVIEW" },
      { role: "user", content: "# Working Files\n\nHere are the files:\n\nsrc/x.py\n```\nprint(1)\n```" },
      { role: "user", content: "NOW\n\nREMINDER" }
    ])
  })

  it("puts cache_control on the system message when L0 has no history", () => {
    const [system] = assembleTieredMessages({ systemPrompt: "SYS", prompt: "hi" })
    expect(system).toEqual(cached("system", "SYS"))
  })

  it("emits nothing for empty tiers and one breakpoint per non-empty cached tier", () => {
    const messages = assembleTieredMessages({
      systemPrompt: "SYS",
      tieredContent: { L2: { symbols: "S2" } },
      prompt: "hi"
    })
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"])
    const marked = messages.filter((m) => typeof m.content !== "string" && m.content.some((b) => "cache_control" in b))
    expect(marked).toHaveLength(2)
    expect(messages[1]?.content).toBe("# Repository Structure (continued)\n\nS2")
  })

  it("renders the main symbol map with L3's symbols", () => {
    const messages = assembleTieredMessages({ systemPrompt: "SYS", tieredContent: { L3: { symbols: "A" } }, symbolMap: "B", prompt: "p" })
    expect(messages[1]?.content).toBe("# Repository Structure (continued)\n\nA\n\nB")
  })

  it("keeps at most 3 URLs", () => {
    const messages = assembleTieredMessages({ systemPrompt: "S", urlContext: ["1", "2", "3", "4"], prompt: "p" })
    expect(messages[1]?.content).toBe("# URL Context\n\nThe following content was fetched from URLs mentioned in the conversation:\n\n1\n---\n2\n---\n3")
  })

  it("turns images into multimodal parts after the prompt text (reminder included)", () => {
    const messages = assembleTieredMessages({ systemPrompt: "S", prompt: "look", systemReminder: "R", images: ["data:image/png;base64,AAAA"] })
    expect(messages.at(-1)).toEqual({
      role: "user",
      content: [{ type: "text", text: "look\n\nR" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }]
    })
    expect(assembleTieredMessages({ systemPrompt: "S", prompt: "look" }).at(-1)).toEqual({ role: "user", content: "look" })
  })

  it("marks the last text block of a multimodal message, not the image", () => {
    const seed = toSeedMessage({ role: "user", content: [{ type: "text", text: "a" }, { type: "image", url: "data:x" }] }, true)
    expect(seed.content).toEqual([{ type: "text", text: "a", cache_control: CC }, { type: "image_url", image_url: { url: "data:x" } }])
  })

  it("is deterministic: the same input gives byte-identical output", () => {
    const input = { systemPrompt: "S", symbolLegend: "L", tieredContent: { L1: { symbols: "x" } }, prompt: "p" }
    expect(JSON.stringify(assembleTieredMessages(input))).toBe(JSON.stringify(assembleTieredMessages(structuredClone(input))))
  })

  it("counts tokens additively: block tokens equal a per-char count of the messages", () => {
    const counter = charCounter()
    const request = neutralRequest("m", tieredLayout({
      systemPrompt: "SYS",
      symbolLegend: "LEG",
      tieredContent: { L0: { symbols: "S0" }, L1: { symbols: "S1", files: "F1", history: [{ role: "user", content: "h" }] } },
      fileTree: "T",
      urlContext: ["U1", "U2"],
      activeFiles: "F",
      prompt: "P",
      systemReminder: "R",
      images: ["data:i"]
    }, counter))
    const total = request.blocks.reduce((n, b) => n + b.tokens, 0)
    expect(total).toBe(counter.countMessages(request.messages))
  })

  it("sectionOf joins large sections by chunks: same bytes and tokens as a plain join, before and after an edit", () => {
    const counter = charCounter()
    const entries = Array.from({ length: 2000 }, (_, i) => ({ path: `src/dir${i % 7}/file${i}.ts`, text: i % 97 === 0 ? "" : `block ${i}`, tokens: i % 97 === 0 ? 0 : `block ${i}`.length }))
    const plain = (es: typeof entries) => es.filter((e) => e.text !== "").map((e) => e.text).join("\n\n")
    const first = sectionOf(entries, counter)
    expect(first.body.text).toBe(plain(entries))
    expect(first.body.tokens).toBe(plain(entries).length)
    expect(first.paths).toHaveLength(2000)
    expect(sectionOf(entries, counter)).toBe(first)
    const edited = [...entries.slice(0, 1000), { path: "src/new.ts", text: "inserted", tokens: 8 }, ...entries.slice(1001)]
    const second = sectionOf(edited, counter)
    expect(second.body.text).toBe(plain(edited))
    expect(second.body.tokens).toBe(plain(edited).length)
  })
})
