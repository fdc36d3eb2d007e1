import fc from "fast-check"
import { describe, expect } from "vitest"
import { assembleMessages, estimatePromptTokens, FILES_ACTIVE_HEADER, type FlatAssemblyInput, limitUrls, makeEstimatingCounter, makeTokenCounter, type Message, messageText, REPO_MAP_HEADER, withReminder } from "../src/index.ts"
import { FILE_TREE_HEADER, URL_CONTEXT_HEADER } from "../src/assembly/headers.ts"
import { it } from "@strata/test-support"

const full: FlatAssemblyInput = {
  systemPrompt: "You are Strata's assistant.",
  symbolLegend: "# c=class f=function\n",
  symbolMap: "src/a.ts:\nf a()\n",
  fileTree: "README.md\nsrc/a.ts\n",
  urlContext: ["https://a.example\nA", "https://b.example\nB"],
  files: [{ path: "src/a.ts", content: "export const a = 1" }],
  history: [
    { role: "user", content: "earlier question" },
    { role: "assistant", content: "earlier answer" }
  ],
  prompt: "Rename a to b.",
  systemReminder: "Keep edits small."
}

const roles = (messages: ReadonlyArray<Message>) => messages.map((m) => m.role)

describe("assembleMessages (the flat layout, non-tiered)", () => {
  it("puts the system message first, with the system prompt", () => {
    const messages = assembleMessages(full)
    expect(messages[0]!.role).toBe("system")
    expect(messageText(messages[0]!).startsWith("You are Strata's assistant.")).toBe(true)
    expect(messages.slice(1).every((m) => m.role !== "system")).toBe(true)
  })

  it("appends the symbol map to the system message under the Repository Structure header", () => {
    const system = messageText(assembleMessages(full)[0]!)
    expect(system).toBe(
      "You are Strata's assistant.\n\n" + REPO_MAP_HEADER + "# c=class f=function\n\nsrc/a.ts:\nf a()\n"
    )
    expect(system).toContain("# Repository Structure\n\nBelow is a map of the repository")
    // No map, no header.
    expect(messageText(assembleMessages({ systemPrompt: "S", prompt: "p" })[0]!)).toBe("S")
  })

  it("gives the file tree as a user/assistant pair under Repository Files", () => {
    const messages = assembleMessages(full)
    expect(messages[1]).toEqual({ role: "user", content: FILE_TREE_HEADER + "README.md\nsrc/a.ts\n" })
    expect(messageText(messages[1]!).startsWith("# Repository Files\n\nComplete list of files in the repository:\n\n")).toBe(true)
    expect(messages[2]).toEqual({ role: "assistant", content: "Ok." })
  })

  it("gives URL context as a user/assistant pair with the acknowledgement before the conversation, URLs joined by ---", () => {
    const messages = assembleMessages({ ...full, history: [] })
    expect(messages[3]).toEqual({
      role: "user",
      content: URL_CONTEXT_HEADER + "https://a.example\nA\n---\nhttps://b.example\nB"
    })
    expect(messages[4]).toEqual({ role: "assistant", content: "Ok, I've reviewed the URL content." })
  })

  it("after the history, the URL context rides in a user message with no acknowledgement", () => {
    const messages = assembleMessages(full)
    expect(messages[5]).toEqual({ role: "user", content: URL_CONTEXT_HEADER + "https://a.example\nA\n---\nhttps://b.example\nB" })
    expect(messages[6]?.role).toBe("user")
  })

  it("uses at most 3 URLs", () => {
    const messages = assembleMessages({ systemPrompt: "S", prompt: "p", urlContext: ["1", "2", "3", "4"] })
    expect(messageText(messages[1]!)).toBe(URL_CONTEXT_HEADER + "1\n---\n2\n---\n3")
    expect(limitUrls(["1", "2", "3", "4"]).warning).toContain("4 URLs")
    expect(limitUrls(["1"]).warning).toBeUndefined()
  })

  it("gives active files under Working Files, acknowledged only before the conversation", () => {
    const fresh = assembleMessages({ ...full, history: [] })
    expect(fresh[5]).toEqual({ role: "user", content: FILES_ACTIVE_HEADER + "src/a.ts\n```\nexport const a = 1\n```" })
    expect(messageText(fresh[5]!).startsWith("# Working Files\n\nHere are the files:\n\n")).toBe(true)
    expect(fresh[6]).toEqual({ role: "assistant", content: "Ok." })
    const messages = assembleMessages(full)
    expect(messages[6]).toEqual({ role: "user", content: FILES_ACTIVE_HEADER + "src/a.ts\n```\nexport const a = 1\n```" })
  })

  it("puts history messages, unwrapped, after the tree and before the sections that ride with the prompt", () => {
    const messages = assembleMessages(full)
    expect(messages.slice(3, 5)).toEqual(full.history)
    expect(messages).toHaveLength(8)
    // No synthetic assistant turn after the conversation started: the last assistant message is the model's.
    expect(roles(messages)).toEqual(["system", "user", "assistant", "user", "assistant", "user", "user", "user"])
  })

  it("ends with the prompt and the system reminder after a blank line", () => {
    const last = assembleMessages(full).at(-1)!
    expect(last).toEqual({ role: "user", content: "Rename a to b.\n\nKeep edits small." })
    expect(withReminder("p", "")).toBe("p")
  })

  it("with no images the prompt is a string; images produce multimodal content parts", () => {
    expect(typeof assembleMessages(full).at(-1)!.content).toBe("string")
    const last = assembleMessages({
      ...full,
      images: ["data:image/png;base64,AAAA", { type: "image", url: "https://x.example/cat.jpg", mediaType: "image/jpeg" }]
    }).at(-1)!
    expect(last).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Rename a to b.\n\nKeep edits small." },
        { type: "image", url: "data:image/png;base64,AAAA" },
        { type: "image", url: "https://x.example/cat.jpg", mediaType: "image/jpeg" }
      ]
    })
  })

  it("leaves out empty sections entirely", () => {
    const messages = assembleMessages({ systemPrompt: "S", prompt: "p", fileTree: "  ", urlContext: [""], files: [], history: [] })
    expect(messages).toEqual([
      { role: "system", content: "S" },
      { role: "user", content: "p" }
    ])
  })

  it("estimate_prompt_tokens > 0 (exact and estimated counters)", async () => {
    const messages = assembleMessages(full)
    expect(estimatePromptTokens(messages, makeEstimatingCounter())).toBeGreaterThan(0)
    const exact = await makeTokenCounter("gpt-4o")
    expect(estimatePromptTokens(messages, exact)).toBeGreaterThan(0)
    expect(estimatePromptTokens(messages, exact)).toBe(exact.countMessages(messages))
  })

  it("is deterministic: the same input gives byte-identical messages", () => {
    const text = fc.string({ maxLength: 40 })
    fc.assert(
      fc.property(text, text, fc.array(text, { maxLength: 5 }), fc.array(fc.tuple(text, text), { maxLength: 4 }), (system, prompt, urls, files) => {
        const input: FlatAssemblyInput = {
          systemPrompt: system,
          prompt,
          urlContext: urls,
          files: files.map(([path, content]) => ({ path, content }))
        }
        const a = JSON.stringify(assembleMessages(input))
        const b = JSON.stringify(assembleMessages(structuredClone(input)))
        const parsed = JSON.parse(a) as Array<Message>
        return a === b && parsed[0]!.role === "system" && parsed.at(-1)!.role === "user"
      }),
      { numRuns: 200, seed: 7 }
    )
  })
})
