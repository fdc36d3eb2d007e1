/**
 * XML escaping and canonical JSON for the chunk builder. Everything a chunk carries
 * (content, ids, tool names, reasons) passes through here, so chunk data can never
 * close its own tag or forge another, the output is always well-formed XML (characters
 * XML cannot carry become U+FFFD), and the same data always renders the same bytes.
 */

const TEXT_ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;" }

// Tabs and line breaks become character references so an attribute stays on one line
// and survives XML attribute-value normalization unchanged.
const ATTRIBUTE_ENTITIES: Readonly<Record<string, string>> = {
  ...TEXT_ENTITIES,
  "\"": "&quot;",
  "'": "&apos;",
  "\t": "&#9;",
  "\n": "&#10;"
}

// What XML 1.0 cannot carry at all, not even as a character reference: C0 controls
// other than tab, LF and CR, U+FFFE and U+FFFF, and (matched per code point under the
// `u` flag) surrogates with no partner.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NOT_XML_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff]/gu

/**
 * Replace every character XML 1.0 cannot carry (C0 controls other than tab, LF and CR,
 * lone surrogates, U+FFFE, U+FFFF) with U+FFFD, so the rendered XML stays well-formed.
 * Everything else is left as it is.
 *
 * @example
 * ```ts
 * import { toXmlCharacters } from "@strata/core"
 * toXmlCharacters("a\u0000b\ud800") // "a\ufffdb\ufffd"
 * ```
 */
export const toXmlCharacters = (text: string): string => text.replace(NOT_XML_CHARACTER, "\ufffd")

/**
 * Escape text for an element body: `&`, `<` and `>` become entities, a carriage return
 * becomes `&#13;` (an XML parser would turn a literal one into a line feed), and
 * characters XML cannot carry become U+FFFD (see `toXmlCharacters`).
 *
 * @example
 * ```ts
 * import { escapeXmlText } from "@strata/core"
 * escapeXmlText("</tool_result>") // "&lt;/tool_result&gt;"
 * ```
 */
export const escapeXmlText = (text: string): string =>
  toXmlCharacters(text).replace(/[&<>\r]/g, (c) => TEXT_ENTITIES[c] ?? c)

/**
 * Escape a double-quoted attribute value: markup characters, both quotes, tabs and
 * line breaks become entities or character references; characters XML cannot carry
 * become U+FFFD.
 *
 * @example
 * ```ts
 * import { escapeXmlAttribute } from "@strata/core"
 * escapeXmlAttribute('a "b"\nc') // "a &quot;b&quot;&#10;c"
 * ```
 */
export const escapeXmlAttribute = (value: string): string =>
  toXmlCharacters(value).replace(/[&<>"'\t\n\r]/g, (c) => ATTRIBUTE_ENTITIES[c] ?? c)

const NAMED: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" }

/**
 * Undo `escapeXmlText` / `escapeXmlAttribute` (the five named entities and numeric
 * character references). For readers of rendered chunks, and for tests. Characters
 * the escape replaced with U+FFFD do not come back.
 *
 * @example
 * ```ts
 * import { unescapeXml } from "@strata/core"
 * unescapeXml("a &lt;b&gt;&#10;") // "a <b>\n"
 * ```
 */
export const unescapeXml = (text: string): string =>
  text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (whole, ref: string) => {
    if (ref.startsWith("#x")) return String.fromCodePoint(Number.parseInt(ref.slice(2), 16))
    if (ref.startsWith("#")) return String.fromCodePoint(Number.parseInt(ref.slice(1), 10))
    return NAMED[ref] ?? whole
  })

/** A value an attribute can take; `undefined` and `null` omit the attribute. */
export type XmlAttributeValue = string | number | boolean | null | undefined

// Tag and attribute names come from renderers, never from chunk data; a bad one is a bug.
const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/

const checkName = (name: string): string => {
  if (!XML_NAME.test(name)) throw new globalThis.Error(`Not a valid XML name: ${JSON.stringify(name)}`)
  return name
}

/**
 * Render attributes in the given order as ` name="value"` pairs, skipping
 * `undefined` and `null`, escaping every value.
 *
 * @example
 * ```ts
 * import { xmlAttributes } from "@strata/core"
 * xmlAttributes({ id: "c1", success: true, error: undefined }) // ' id="c1" success="true"'
 * ```
 */
export const xmlAttributes = (attributes: Readonly<Record<string, XmlAttributeValue>>): string => {
  let out = ""
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null) continue
    out += ` ${checkName(name)}="${escapeXmlAttribute(String(value))}"`
  }
  return out
}

/**
 * One element: `<tag attrs>\n{escaped body}\n</tag>`. Custom renderers should build
 * their output with this so their chunks get the same escaping as the defaults.
 *
 * @example
 * ```ts
 * import { xmlElement } from "@strata/core"
 * xmlElement("note", { id: "c1" }, "1 < 2") // '<note id="c1">\n1 &lt; 2\n</note>'
 * ```
 */
export const xmlElement = (
  tag: string,
  attributes: Readonly<Record<string, XmlAttributeValue>>,
  body: string
): string => `<${checkName(tag)}${xmlAttributes(attributes)}>\n${escapeXmlText(body)}\n</${tag}>`

/**
 * JSON with object keys sorted (by UTF-16 code units) at every depth, no whitespace,
 * and total over any input: `undefined`, functions and symbols are dropped from
 * objects and become `null` in arrays (as `JSON.stringify` does), non-finite numbers
 * become `null`, bigints become strings, `toJSON` is honoured, Maps become objects
 * with sorted keys, Sets arrays, and a cycle becomes the string `"[Circular]"`.
 *
 * @example
 * ```ts
 * import { stableJson } from "@strata/core"
 * stableJson({ b: 1, a: { d: [2], c: null } }) // '{"a":{"c":null,"d":[2]},"b":1}'
 * ```
 */
export const stableJson = (value: unknown): string => {
  const ancestors = new Set<object>()
  const walk = (v: unknown, inArray: boolean): string | undefined => {
    switch (typeof v) {
      case "string":
        return JSON.stringify(v)
      case "number":
        return Number.isFinite(v) ? JSON.stringify(v) : "null"
      case "boolean":
        return v ? "true" : "false"
      case "bigint":
        return JSON.stringify(v.toString())
      case "undefined":
      case "function":
      case "symbol":
        return inArray ? "null" : undefined
    }
    if (v === null) return "null"
    const obj = v as object
    if (ancestors.has(obj)) return JSON.stringify("[Circular]")
    const toJSON = (obj as { toJSON?: unknown }).toJSON
    if (typeof toJSON === "function") {
      ancestors.add(obj)
      try {
        return walk((toJSON as (key: string) => unknown).call(obj, ""), inArray)
      } finally {
        ancestors.delete(obj)
      }
    }
    ancestors.add(obj)
    try {
      if (Array.isArray(obj)) return `[${obj.map((item) => walk(item, true) ?? "null").join(",")}]`
      if (obj instanceof Set) return `[${Array.from(obj, (item) => walk(item, true) ?? "null").join(",")}]`
      const entries: Array<readonly [string, unknown]> = obj instanceof Map
        ? Array.from(obj, ([k, val]) => [String(k), val] as const)
        : Object.keys(obj).map((k) => [k, (obj as Record<string, unknown>)[k]] as const)
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      const parts: Array<string> = []
      for (const [k, val] of entries) {
        const rendered = walk(val, false)
        if (rendered !== undefined) parts.push(`${JSON.stringify(k)}:${rendered}`)
      }
      return `{${parts.join(",")}}`
    } finally {
      ancestors.delete(obj)
    }
  }
  return walk(value, false) ?? "null"
}
