/**
 * Native request bodies as one list of cacheable blocks in prefix order, each with its
 * path in the body, so two requests can be compared block by block. The walk is
 * generic: every element of a content array is one block identified by its canonical
 * JSON without cache markers, whatever its type (text, image, tool_use, toolResult,
 * functionCall, function_call_output...). It yields the blocks the prompt-cache
 * simulators hash, in the same order and number, so their traces map onto paths.
 */
import { estimateTokens, IMAGE_TOKENS } from "@strata/core"
import { asArray, asString, canonicalJson, isRecord } from "../internal/json.ts"

/** The body formats `explainMiss` reads. */
export type BodyFormat = "anthropic" | "bedrock-converse" | "openai-chat" | "openai-responses" | "gemini" | "ai-sdk"

/** Which part of the prompt a block belongs to; the cache is a prefix over them in this order. */
export type BlockSection = "tools" | "system" | "messages"

/** One cacheable block of a request. */
export interface BodyBlock {
  readonly section: BlockSection
  /** Where the block sits in the body: `tools[2]`, `system[0]`, `messages[3].content[1]`. */
  readonly path: string
  /** Index of the message (or input item, or Gemini content) it belongs to. */
  readonly message?: number
  /** Index of the part within that message's content. */
  readonly part?: number
  readonly role?: string
  /** The block's type: `text`, `image`, `tool_use`, `toolResult`, `functionCall`, `tool`... */
  readonly kind: string
  /** Everything that makes the block's bytes, markers excluded: equal identity, equal block. */
  readonly identity: string
  /** A short human-readable excerpt (a tool's name, the start of a text). */
  readonly preview: string
  /** Estimated tokens (text at the counter's rate, a fixed amount per image or document). */
  readonly tokens: number
}

/** A request body as blocks, with the settings that key the cache beside the blocks. */
export interface WalkedBody {
  readonly format: BodyFormat
  readonly model: string | undefined
  readonly blocks: ReadonlyArray<BodyBlock>
  /** Blocks carrying a cache marker (explicit, or where the automatic marker lands). */
  readonly markers: ReadonlyArray<number>
  /**
   * Request settings that invalidate the cache without being blocks: `tool_choice` and
   * `thinking` (Anthropic, Bedrock: the messages tier) or `prompt_cache_key`, reasoning
   * effort and friends (OpenAI: everything).
   */
  readonly settings: Readonly<Record<string, unknown>>
  /** What a settings change invalidates: `messages` (from the first message on) or `all`. */
  readonly settingsScope: "messages" | "all"
}

export interface WalkOptions {
  readonly countTokens?: ((text: string) => number) | undefined
  readonly imageTokens?: number | undefined
}

const MARKER_KEYS: ReadonlySet<string> = new Set(["cache_control", "prompt_cache_breakpoint"])
const MEDIA_KEYS = ["image", "document", "video", "inlineData", "fileData"]
const MEDIA_TYPES: ReadonlySet<string> = new Set(["image", "image_url", "document", "input_image", "input_file", "file"])

const preview = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= 60 ? flat : `${flat.slice(0, 57)}...`
}

/** The kind of a part: its `type`, or its one key for typeless formats (Bedrock, Gemini). */
const kindOf = (part: Record<string, unknown>): string =>
  asString(part["type"]) ?? Object.keys(part).filter((k) => k !== "cachePoint" && k !== "thought" && k !== "thoughtSignature").sort()[0] ?? "empty"

/** The text whose tokens a part costs, and whether it is media. */
const textOf = (part: Record<string, unknown>): { readonly text: string; readonly media: boolean } => {
  const type = asString(part["type"])
  if (typeof part["text"] === "string" && (type === undefined || type === "text" || type === "input_text" || type === "output_text" || type === "reasoning")) {
    return { text: part["text"], media: false }
  }
  if ((type !== undefined && MEDIA_TYPES.has(type)) || MEDIA_KEYS.some((k) => part[k] !== undefined)) return { text: "", media: true }
  if (type === "thinking") return { text: asString(part["thinking"]) ?? "", media: false }
  return { text: canonicalJson(part, MARKER_KEYS), media: false }
}

/** Collects blocks for one body. */
const makeCollector = (options: WalkOptions) => {
  const count = options.countTokens ?? estimateTokens
  const image = options.imageTokens ?? IMAGE_TOKENS
  const blocks: Array<BodyBlock> = []
  const markers: Array<number> = []
  const push = (
    where: { readonly section: BlockSection; readonly path: string; readonly message?: number; readonly part?: number; readonly role?: string },
    kind: string,
    identity: string,
    text: string,
    media: boolean,
    label?: string
  ) => {
    blocks.push({ ...where, kind, identity, preview: preview(label ?? (media ? `(${kind})` : text)), tokens: (text.length === 0 ? 0 : count(text)) + (media ? image : 0) })
  }
  /** A content part: its identity includes the role so a role change is a change. */
  const part = (where: Parameters<typeof push>[0], value: Record<string, unknown>) => {
    const { text, media } = textOf(value)
    push(where, kindOf(value), `${where.role ?? ""}\u0000${canonicalJson(value, MARKER_KEYS)}`, text, media)
  }
  const text = (where: Parameters<typeof push>[0], value: string) => push(where, "text", `${where.role ?? ""}\u0000${JSON.stringify(value)}`, value, false)
  const mark = () => {
    if (blocks.length > 0 && markers.at(-1) !== blocks.length - 1) markers.push(blocks.length - 1)
  }
  return { blocks, markers, push, part, text, mark }
}

const tool = (c: ReturnType<typeof makeCollector>, path: string, value: unknown) => {
  const record = isRecord(value) ? value : {}
  const spec = isRecord(record["toolSpec"]) ? record["toolSpec"] : isRecord(record["function"]) ? record["function"] : record
  const name = asString(spec["name"]) ?? asString(record["type"]) ?? "tool"
  const json = canonicalJson(value, MARKER_KEYS)
  c.push({ section: "tools", path }, "tool", json, json, false, name)
}

// ---------------------------------------------------------------------------------

const walkAnthropic = (body: Record<string, unknown>, options: WalkOptions): WalkedBody => {
  const c = makeCollector(options)
  asArray(body["tools"]).forEach((t, i) => {
    tool(c, `tools[${i}]`, t)
    if (isRecord(t) && t["cache_control"] !== undefined) c.mark()
  })
  const system = body["system"]
  if (typeof system === "string") {
    if (system.length > 0) c.text({ section: "system", path: "system" }, system)
  } else {
    asArray(system).forEach((b, i) => {
      if (!isRecord(b)) return
      c.part({ section: "system", path: `system[${i}]` }, b)
      if (b["cache_control"] !== undefined) c.mark()
    })
  }
  asArray(body["messages"]).forEach((m, i) => {
    if (!isRecord(m)) return
    const role = asString(m["role"]) ?? ""
    // Gateway bodies (Chat format with cache_control) carry the system prompt as messages.
    const section: BlockSection = role === "system" || role === "developer" ? "system" : "messages"
    const content = m["content"]
    if (typeof content === "string") {
      c.text({ section, path: `messages[${i}].content`, message: i, part: 0, role }, content)
      return
    }
    asArray(content).forEach((p, j) => {
      if (!isRecord(p)) return
      c.part({ section, path: `messages[${i}].content[${j}]`, message: i, part: j, role }, p)
      if (p["cache_control"] !== undefined) c.mark()
    })
  })
  // The automatic (top-level) marker lands on the last block that may carry one.
  if (body["cache_control"] !== undefined) {
    let at = c.blocks.length - 1
    while (at >= 0 && (c.blocks[at]!.kind === "thinking" || c.blocks[at]!.kind === "redacted_thinking")) at--
    if (at >= 0 && !c.markers.includes(at)) c.markers.push(at)
    c.markers.sort((a, b) => a - b)
  }
  return {
    format: "anthropic",
    model: asString(body["model"]),
    blocks: c.blocks,
    markers: c.markers,
    settings: { tool_choice: body["tool_choice"], thinking: body["thinking"] },
    settingsScope: "messages"
  }
}

const walkConverse = (body: Record<string, unknown>, options: WalkOptions): WalkedBody => {
  const c = makeCollector(options)
  const toolConfig = isRecord(body["toolConfig"]) ? body["toolConfig"] : {}
  asArray(toolConfig["tools"]).forEach((t, i) => {
    if (isRecord(t) && t["cachePoint"] !== undefined) c.mark()
    else tool(c, `toolConfig.tools[${i}]`, t)
  })
  asArray(body["system"]).forEach((b, i) => {
    if (!isRecord(b)) return
    if (b["cachePoint"] !== undefined) c.mark()
    else c.part({ section: "system", path: `system[${i}]` }, b)
  })
  asArray(body["messages"]).forEach((m, i) => {
    if (!isRecord(m)) return
    const role = asString(m["role"]) ?? ""
    asArray(m["content"]).forEach((p, j) => {
      if (!isRecord(p)) return
      if (p["cachePoint"] !== undefined) c.mark()
      else c.part({ section: "messages", path: `messages[${i}].content[${j}]`, message: i, part: j, role }, p)
    })
  })
  return {
    format: "bedrock-converse",
    model: asString(body["modelId"]),
    blocks: c.blocks,
    markers: c.markers,
    settings: { toolChoice: toolConfig["toolChoice"], additionalModelRequestFields: body["additionalModelRequestFields"] },
    settingsScope: "messages"
  }
}

const openAISettings = (body: Record<string, unknown>): Record<string, unknown> => ({
  prompt_cache_key: body["prompt_cache_key"],
  reasoning: isRecord(body["reasoning"]) ? body["reasoning"]["effort"] : body["reasoning_effort"],
  verbosity: isRecord(body["text"]) ? body["text"]["verbosity"] : body["verbosity"],
  service_tier: body["service_tier"],
  parallel_tool_calls: body["parallel_tool_calls"],
  tool_choice: body["tool_choice"]
})

/** An OpenAI message's content: one block for a string, one per part otherwise. */
const openAIContent = (c: ReturnType<typeof makeCollector>, where: { section: BlockSection; path: string; message: number; role: string }, content: unknown) => {
  if (typeof content === "string") {
    c.text({ ...where, part: 0 }, content)
    return
  }
  asArray(content).forEach((p, j) => {
    if (!isRecord(p)) return
    c.part({ ...where, path: `${where.path}[${j}]`, part: j }, p)
    if (p["prompt_cache_breakpoint"] !== undefined) c.mark()
  })
}

const walkOpenAIChat = (body: Record<string, unknown>, options: WalkOptions): WalkedBody => {
  const c = makeCollector(options)
  asArray(body["tools"]).forEach((t, i) => tool(c, `tools[${i}]`, t))
  if (body["response_format"] !== undefined) {
    const json = canonicalJson(body["response_format"])
    c.push({ section: "tools", path: "response_format" }, "response_format", json, json, false)
  }
  let leading = true
  asArray(body["messages"]).forEach((m, i) => {
    if (!isRecord(m)) return
    const role = asString(m["role"]) ?? ""
    const isSystem = role === "system" || role === "developer"
    if (!isSystem) leading = false
    const section: BlockSection = isSystem && leading ? "system" : "messages"
    // Name and tool call id frame the message, as in the simulator.
    const framing = `${role}\u0000${asString(m["name"]) ?? ""}\u0000${asString(m["tool_call_id"]) ?? ""}`
    const before = c.blocks.length
    if (m["content"] !== undefined && m["content"] !== null) {
      openAIContent(c, { section, path: `messages[${i}].content`, message: i, role: framing }, m["content"])
    }
    asArray(m["tool_calls"]).forEach((call, k) => {
      const json = canonicalJson(call)
      const name = isRecord(call) && isRecord(call["function"]) ? asString(call["function"]["name"]) : undefined
      c.push({ section, path: `messages[${i}].tool_calls[${k}]`, message: i, part: k, role: framing }, "tool_call", `${framing}\u0000${json}`, json, false, name)
    })
    if (c.blocks.length === before) c.push({ section, path: `messages[${i}]`, message: i, role: framing }, "empty", `${framing}\u0000`, "", false)
  })
  return { format: "openai-chat", model: asString(body["model"]), blocks: c.blocks, markers: c.markers, settings: openAISettings(body), settingsScope: "all" }
}

const walkOpenAIResponses = (body: Record<string, unknown>, options: WalkOptions): WalkedBody => {
  const c = makeCollector(options)
  asArray(body["tools"]).forEach((t, i) => tool(c, `tools[${i}]`, t))
  const text = body["text"]
  if (isRecord(text) && text["format"] !== undefined) {
    const json = canonicalJson(text["format"])
    c.push({ section: "tools", path: "text.format" }, "response_format", json, json, false)
  }
  const instructions = asString(body["instructions"])
  if (instructions !== undefined && instructions.length > 0) c.text({ section: "system", path: "instructions" }, instructions)
  const input = body["input"]
  if (typeof input === "string") {
    c.text({ section: "messages", path: "input", message: 0, part: 0, role: "user" }, input)
  } else {
    let leading = true
    asArray(input).forEach((item, i) => {
      if (!isRecord(item)) return
      const type = asString(item["type"]) ?? "message"
      if (type === "message") {
        const role = asString(item["role"]) ?? ""
        const isSystem = role === "system" || role === "developer"
        if (!isSystem) leading = false
        openAIContent(c, { section: isSystem && leading ? "system" : "messages", path: `input[${i}].content`, message: i, role }, item["content"])
        return
      }
      leading = false
      if (type === "function_call_output" && Array.isArray(item["output"])) {
        // A list output is content parts, each a block that may carry a breakpoint.
        openAIContent(c, { section: "messages", path: `input[${i}].output`, message: i, role: `function_call_output\u0000${asString(item["call_id"]) ?? ""}` }, item["output"])
        return
      }
      const json = canonicalJson(item)
      const output = type === "function_call_output" ? (asString(item["output"]) ?? json) : json
      c.push({ section: "messages", path: `input[${i}]`, message: i }, type, json, output, false, asString(item["name"]) ?? output)
    })
  }
  return { format: "openai-responses", model: asString(body["model"]), blocks: c.blocks, markers: c.markers, settings: openAISettings(body), settingsScope: "all" }
}

const GEMINI_CONFIG_FIELDS = ["systemInstruction", "tools", "toolConfig", "cachedContent", "contents"] as const

const walkGemini = (raw: Record<string, unknown>, options: WalkOptions): WalkedBody => {
  // `@google/genai` parameters keep these under `config`; the REST body has them at the top.
  const config = isRecord(raw["config"]) ? raw["config"] : {}
  const body: Record<string, unknown> = { ...raw }
  for (const field of GEMINI_CONFIG_FIELDS) if (body[field] === undefined && config[field] !== undefined) body[field] = config[field]
  const c = makeCollector(options)
  asArray(body["tools"]).forEach((t, i) => tool(c, `tools[${i}]`, t))
  if (body["toolConfig"] !== undefined) tool(c, "toolConfig", { toolConfig: body["toolConfig"] })
  const system = body["systemInstruction"]
  if (typeof system === "string") c.part({ section: "system", path: "systemInstruction" }, { text: system })
  else if (isRecord(system)) {
    asArray(system["parts"]).forEach((p, j) => {
      if (isRecord(p)) c.part({ section: "system", path: `systemInstruction.parts[${j}]` }, p)
    })
  }
  asArray(body["contents"]).forEach((content, i) => {
    if (!isRecord(content)) return
    const role = asString(content["role"]) ?? "user"
    asArray(content["parts"]).forEach((p, j) => {
      if (isRecord(p)) c.part({ section: "messages", path: `contents[${i}].parts[${j}]`, message: i, part: j, role }, p)
    })
  })
  const model = asString(body["model"])
  return {
    format: "gemini",
    model: model?.replace(/^models\//, ""),
    blocks: c.blocks,
    markers: c.markers,
    settings: { cachedContent: body["cachedContent"] },
    settingsScope: "all"
  }
}

/**
 * Guess a body's format from its fields: `input` (Responses), `contents` (Gemini),
 * `modelId`/`toolConfig` or typeless content parts (Bedrock Converse), `max_tokens` or
 * top-level `system` (Anthropic Messages, also Bedrock InvokeModel), `providerOptions`
 * or hyphenated part types (AI SDK messages), otherwise Chat Completions.
 */
export const detectFormat = (body: unknown): BodyFormat => {
  if (!isRecord(body)) return "anthropic"
  if (body["messages"] === undefined && body["input"] !== undefined) return "openai-responses"
  if (body["contents"] !== undefined || (isRecord(body["config"]) && body["messages"] === undefined)) return "gemini"
  if (body["modelId"] !== undefined || body["toolConfig"] !== undefined || body["inferenceConfig"] !== undefined) return "bedrock-converse"
  const messages = asArray(body["messages"])
  const parts = messages.flatMap((m) => (isRecord(m) ? asArray(m["content"]) : []))
  if (parts.some((p) => isRecord(p) && p["type"] === undefined)) return "bedrock-converse"
  const aiSdk = body["providerOptions"] !== undefined ||
    messages.some((m) => isRecord(m) && (m["providerOptions"] !== undefined || m["role"] === "tool" && asArray(m["content"]).length > 0 && isRecord(asArray(m["content"])[0]) && (asArray(m["content"])[0] as Record<string, unknown>)["type"] === "tool-result")) ||
    parts.some((p) => isRecord(p) && (p["providerOptions"] !== undefined || (asString(p["type"]) ?? "").includes("-")))
  if (aiSdk) return "ai-sdk"
  if (body["max_tokens"] !== undefined && body["max_completion_tokens"] === undefined && !messages.some((m) => isRecord(m) && m["role"] === "system")) return "anthropic"
  if (body["system"] !== undefined || body["anthropic_version"] !== undefined) return "anthropic"
  return "openai-chat"
}

/**
 * Walk a native body into blocks. AI SDK bodies are walked through their Anthropic or
 * Bedrock rendering (see `aiSdkToNative`), by the caller.
 *
 * @example
 * ```ts
 * import { walkBody } from "@strata/providers"
 * walkBody({ model: "claude-sonnet-4-6", max_tokens: 512, system: "Be brief.", messages: [{ role: "user", content: "hi" }] }, "anthropic").blocks.map((b) => b.path)
 * // ["system", "messages[0].content"]
 * ```
 */
export const walkBody = (body: unknown, format: Exclude<BodyFormat, "ai-sdk">, options: WalkOptions = {}): WalkedBody => {
  const record = isRecord(body) ? body : {}
  switch (format) {
    case "anthropic":
      return walkAnthropic(record, options)
    case "bedrock-converse":
      return walkConverse(record, options)
    case "openai-chat":
      return walkOpenAIChat(record, options)
    case "openai-responses":
      return walkOpenAIResponses(record, options)
    case "gemini":
      return walkGemini(record, options)
  }
}
