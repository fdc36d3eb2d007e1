// The chunk builder's output is well-formed XML for any chunk data: every code point
// (controls, lone surrogates, U+FFFE/U+FFFF, markup) in content, ids and attributes. A
// small strict XML 1.0 reader below parses each message the way a conforming parser
// would (line-end and attribute-value normalization included) and gives back the text.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ChunkType, createContextBuilder, escapeXmlAttribute, escapeXmlText, toXmlCharacters, type MemoryChunkInput } from "../src/index.ts"

interface XmlElement {
  readonly name: string
  readonly attributes: Readonly<Record<string, string>>
  readonly children: ReadonlyArray<XmlElement | string>
}

class NotWellFormed extends Error {}

/** XML 1.0 `Char`. */
const isXmlChar = (cp: number): boolean =>
  cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff)

const NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*/
const PREDEFINED: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" }

/**
 * Parse one XML document strictly (no DTD, no PIs, no comments, no CDATA: the builder
 * emits none). Throws `NotWellFormed` naming the first violation.
 */
const parseXml = (input: string): XmlElement => {
  // Every code point of the document must be a Char; a lone surrogate is one code point here.
  for (const ch of input) {
    const cp = ch.codePointAt(0) ?? 0
    if (!isXmlChar(cp)) throw new NotWellFormed(`character U+${cp.toString(16).padStart(4, "0")} is not allowed in XML`)
  }
  // End-of-line handling (XML 1.0 §2.11).
  const doc = input.replace(/\r\n?/g, "\n")
  let i = 0
  const fail = (what: string): never => {
    throw new NotWellFormed(`${what} at offset ${i}: ${JSON.stringify(doc.slice(i, i + 30))}`)
  }
  const reference = (): string => {
    const end = doc.indexOf(";", i)
    if (end === -1) fail("unterminated reference")
    const body = doc.slice(i + 1, end)
    let out: string
    if (/^#x[0-9A-Fa-f]+$/.test(body) || /^#[0-9]+$/.test(body)) {
      const cp = body.startsWith("#x") ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10)
      if (!isXmlChar(cp)) fail(`reference to a non-character &${body};`)
      out = String.fromCodePoint(cp)
    } else {
      const named = PREDEFINED[body]
      if (named === undefined) fail(`undefined entity &${body};`)
      out = named as string
    }
    i = end + 1
    return out
  }
  const name = (): string => {
    const m = NAME.exec(doc.slice(i))
    if (m === null) return fail("expected a name")
    i += m[0].length
    return m[0]
  }
  const spaces = (): number => {
    const start = i
    while (i < doc.length && /[ \t\n]/.test(doc[i] ?? "")) i++
    return i - start
  }
  const element = (): XmlElement => {
    if (doc[i] !== "<") fail("expected <")
    i++
    const tag = name()
    const attributes: Record<string, string> = {}
    for (;;) {
      const spaced = spaces()
      if (doc.startsWith("/>", i)) {
        i += 2
        return { name: tag, attributes, children: [] }
      }
      if (doc[i] === ">") {
        i++
        break
      }
      if (spaced === 0) fail("expected whitespace before an attribute")
      const key = name()
      if (key in attributes) fail(`duplicate attribute ${key}`)
      spaces()
      if (doc[i] !== "=") fail("expected =")
      i++
      spaces()
      const quote = doc[i]
      if (quote !== "\"" && quote !== "'") return fail("expected a quoted value")
      i++
      let value = ""
      while (doc[i] !== quote) {
        if (i >= doc.length) fail("unterminated attribute value")
        const c = doc[i] as string
        if (c === "<") fail("< in an attribute value")
        if (c === "&") value += reference()
        else {
          // Attribute-value normalization (§3.3.3): literal whitespace becomes a space.
          value += c === "\t" || c === "\n" ? " " : c
          i++
        }
      }
      i++
      attributes[key] = value
    }
    const children: Array<XmlElement | string> = []
    let text = ""
    const flush = () => {
      if (text !== "") children.push(text)
      text = ""
    }
    for (;;) {
      if (i >= doc.length) fail(`unclosed <${tag}>`)
      if (doc.startsWith("</", i)) {
        i += 2
        const closing = name()
        if (closing !== tag) fail(`</${closing}> closes <${tag}>`)
        spaces()
        if (doc[i] !== ">") fail("expected >")
        i++
        flush()
        return { name: tag, attributes, children }
      }
      if (doc.startsWith("<!", i) || doc.startsWith("<?", i)) fail("markup declarations are not expected")
      if (doc[i] === "<") {
        flush()
        children.push(element())
        continue
      }
      if (doc.startsWith("]]>", i)) fail("]]> in content")
      if (doc[i] === "&") text += reference()
      else text += doc[i++]
    }
  }
  const root = element()
  if (i !== doc.length) fail("content after the root element")
  return root
}

const textOf = (e: XmlElement): string => e.children.map((c) => (typeof c === "string" ? c : textOf(c))).join("")

describe("the strict XML reader", () => {
  it("accepts well-formed documents and gives back their text", () => {
    const doc = parseXml('<root a="1 &amp; 2&#10;x"><b>x &lt; y&#13;z</b>tail<c/></root>')
    expect(doc.attributes).toEqual({ a: "1 & 2\nx" })
    expect(textOf(doc)).toBe("x < y\rztail")
  })

  it.each([
    ["<root>\u0001</root>", "control character"],
    ["<root>\ud800</root>", "lone surrogate"],
    ["<root>\uffff</root>", "U+FFFF"],
    ["<root>a & b</root>", "bare ampersand"],
    ["<root>&#1;</root>", "reference to a control character"],
    ["<root>]]></root>", "]]> in content"],
    ["<root><a></root>", "mismatched tags"],
    ['<root a="<"></root>', "< in an attribute"],
    ['<root a="1" a="2"></root>', "duplicate attribute"],
    ["<root></root><x/>", "two roots"]
  ])("refuses %j (%s)", (doc) => {
    expect(() => parseXml(doc)).toThrow(NotWellFormed)
  })
})

/** Strings over every code point, biased toward what breaks XML. */
const hostile = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary" }),
      fc.constantFrom("\u0000", "\u0001", "\u0008", "\u000b", "\u000c", "\u001b", "\u001f", "\u007f", "\u0085", "\ud800", "\udfff", "\ud83d", "\ude00", "\ud83d\ude00", "\ufffe", "\uffff", "\r", "\r\n", "\t", "\n", "]]>", "&", "<", ">", "\"", "'", "&#0;", "</x>")
    ),
    { maxLength: 12 }
  )
  .map((parts) => parts.join(""))

describe("well-formed output for any chunk data", () => {
  it("property: every message parses as XML, and each element's text and id are the chunk's (XML characters kept)", () => {
    const chunk = fc.record({
      kind: fc.constantFrom("user", "assistant", "system", "call", "result", "unknown"),
      id: hostile.filter((s) => s.length > 0),
      tool: hostile,
      content: hostile
    })
    fc.assert(
      fc.property(fc.array(chunk, { minLength: 1, maxLength: 6 }), (specs) => {
        const chunks: Array<MemoryChunkInput> = specs.map((s, n) => {
          const id = `${n}:${s.id}`
          switch (s.kind) {
            case "user":
            case "assistant":
              return { id, type: ChunkType.AGENT, role: s.kind, content: s.content }
            case "system":
              return { id, type: ChunkType.SYSTEM, content: s.content }
            case "call":
              return { id, type: ChunkType.WORKFLOW, action: "tool_call", tool: s.tool, callId: `k${n}`, status: "pending", content: s.content }
            case "result":
              return { id, type: ChunkType.ENVIRONMENT, action: "tool_result", tool: s.tool, callId: `r${n}`, success: true, content: s.content }
            case "unknown":
              return { id, type: "CUSTOM_KIND", content: s.content }
          }
        })
        const r = createContextBuilder().build({ chunks })
        expect(r.excludedChunkIds).toEqual([])
        const elements: Array<XmlElement> = []
        for (const message of r.messages) {
          const root = parseXml(`<root>${message.content}</root>`)
          for (const child of root.children) if (typeof child !== "string") elements.push(child)
        }
        expect(elements.map((e) => e.attributes["id"])).toEqual(chunks.map((c) => toXmlCharacters(c.id)))
        elements.forEach((e, n) => {
          // The renderer frames the body with a line feed on each side.
          expect(textOf(e)).toBe(`\n${toXmlCharacters(String(chunks[n]?.content))}\n`)
          const spec = specs[n]
          if (spec !== undefined && (spec.kind === "call" || spec.kind === "result")) expect(e.attributes["tool"]).toBe(toXmlCharacters(spec.tool))
        })
      }),
      { numRuns: 400 }
    )
  })

  it("property: the escape helpers give text a conforming parser reads back as the XML characters of the input", () => {
    fc.assert(
      fc.property(hostile, (s) => {
        expect(textOf(parseXml(`<r>${escapeXmlText(s)}</r>`))).toBe(toXmlCharacters(s))
        expect(parseXml(`<r a="${escapeXmlAttribute(s)}"/>`).attributes["a"]).toBe(toXmlCharacters(s))
      }),
      { numRuns: 1000 }
    )
  })
})
