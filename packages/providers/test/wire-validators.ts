// Request-body validators: what each real API checks about tool calls, tool results,
// reasoning and cache markers before it runs a request. Pure functions over a parsed
// body, shared by the providers' wire tests (the scripted server checks every body it
// receives with them) and the CLI's replay tests (every dumped body must pass them).
// Each returns the problems it found (empty when the API would accept the body),
// worded like the API's own 400 errors.

type Obj = Record<string, unknown>
const isObj = (u: unknown): u is Obj => typeof u === "object" && u !== null && !Array.isArray(u)
const arr = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])
const objs = (u: unknown): ReadonlyArray<Obj> => arr(u).filter(isObj)
const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)
const isJsonText = (u: unknown): boolean => {
  if (typeof u !== "string") return false
  try {
    JSON.parse(u)
    return true
  } catch {
    return false
  }
}

/**
 * The Anthropic Messages API (also Bedrock InvokeModel and what `@ai-sdk/anthropic` sends):
 * alternating roles from a user turn; every `tool_use` answered by a `tool_result` at the
 * start of the next user message; unique ids; thinking blocks signed and never marked; at
 * most 4 `cache_control` markers; no empty text.
 */
export const validateAnthropic = (body: unknown): Array<string> => {
  const problems: Array<string> = []
  if (!isObj(body)) return ["body: must be a JSON object"]
  let markers = 0
  const countMarker = (b: Obj) => {
    if (b["cache_control"] !== undefined) markers++
  }
  objs(body["tools"]).forEach(countMarker)
  objs(body["system"]).forEach(countMarker)
  if (body["cache_control"] !== undefined) markers++
  const messages = objs(body["messages"])
  if (messages.length === 0) problems.push("messages: at least one message is required")
  const ids = new Set<string>()
  let pending: Array<string> = []
  messages.forEach((m, i) => {
    const role = str(m["role"])
    if (role !== "user" && role !== "assistant") problems.push(`messages.${i}.role: must be "user" or "assistant"`)
    if (i === 0 && role !== "user") problems.push("messages.0.role: the first message must use the user role")
    if (i > 0 && role === str(messages[i - 1]!["role"])) problems.push(`messages.${i}: roles must alternate between "user" and "assistant"`)
    const blocks = typeof m["content"] === "string" ? [{ type: "text", text: m["content"] }] : objs(m["content"])
    if (blocks.length === 0) problems.push(`messages.${i}: content must not be empty`)
    const calls: Array<string> = []
    let seenOther = false
    const answered = new Set<string>()
    blocks.forEach((b, k) => {
      const where = `messages.${i}.content.${k}`
      const type = str(b["type"])
      countMarker(b)
      if (type === "text" && (str(b["text"]) ?? "").length === 0) problems.push(`${where}: text content blocks must be non-empty`)
      if ((type === "thinking" || type === "redacted_thinking") && b["cache_control"] !== undefined) problems.push(`${where}.thinking.cache_control: Extra inputs are not permitted (cache_control cannot be set on ${type} blocks)`)
      if (type === "thinking" && (str(b["signature"]) ?? "").length === 0) problems.push(`${where}.thinking.signature: Field required`)
      if ((type === "thinking" || type === "redacted_thinking" || type === "tool_use") && role !== "assistant") problems.push(`${where}: ${type} blocks are only allowed in assistant messages`)
      if (type === "tool_use") {
        const id = str(b["id"]) ?? ""
        if (ids.has(id)) problems.push(`${where}: \`tool_use\` ids must be unique (${id})`)
        if (!isObj(b["input"])) problems.push(`${where}.input: Input should be a valid dictionary`)
        ids.add(id)
        calls.push(id)
      }
      if (type === "tool_result") {
        const id = str(b["tool_use_id"]) ?? ""
        if (role !== "user") problems.push(`${where}: tool_result blocks are only allowed in user messages`)
        else if (!pending.includes(id)) problems.push(`${where}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`)
        else if (seenOther) problems.push(`${where}: \`tool_result\` blocks must come first in the user message that follows the \`tool_use\` blocks`)
        answered.add(id)
      } else seenOther = true
    })
    const missing = pending.filter((id) => !answered.has(id))
    if (missing.length > 0) {
      problems.push(`messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`)
    }
    pending = calls
  })
  if (pending.length > 0) problems.push(`messages.${messages.length - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${pending.join(", ")}`)
  if (markers > 4) problems.push(`A maximum of 4 blocks with cache_control may be provided. Found ${markers}.`)
  return problems
}

/**
 * OpenAI Chat Completions (also the OpenAI-compatible gateways): an assistant message's
 * `tool_calls` answered by `tool` messages right after it, each naming one of its ids;
 * arguments are JSON text; no breakpoint on assistant output.
 */
export const validateChat = (body: unknown): Array<string> => {
  const problems: Array<string> = []
  if (!isObj(body)) return ["body: must be a JSON object"]
  const messages = objs(body["messages"])
  if (messages.length === 0) problems.push("messages: at least one message is required")
  const ids = new Set<string>()
  let open: Array<string> = []
  let inGroup = false
  messages.forEach((m, i) => {
    const role = str(m["role"])
    if (role !== "tool" && open.length > 0) {
      problems.push(`messages.[${i}]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(", ")}`)
      open = []
    }
    if (role === "tool") {
      const id = str(m["tool_call_id"]) ?? ""
      if (!inGroup) problems.push(`messages.[${i}].role: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`)
      else if (!open.includes(id)) problems.push(`messages.[${i}].tool_call_id: ${id} answers no tool call of the preceding assistant message`)
      open = open.filter((o) => o !== id)
      if (typeof m["content"] !== "string" && objs(m["content"]).some((p) => p["type"] !== "text")) problems.push(`messages.[${i}].content: tool messages take text parts only`)
      return
    }
    inGroup = false
    if (role === "assistant") {
      const calls = objs(m["tool_calls"])
      if (calls.length === 0 && (m["content"] === undefined || m["content"] === null)) problems.push(`messages.[${i}].content: an assistant message needs content or tool_calls`)
      if (objs(m["content"]).some((p) => p["prompt_cache_breakpoint"] !== undefined)) problems.push(`messages.[${i}].content: prompt_cache_breakpoint is not allowed on assistant output`)
      for (const c of calls) {
        const id = str(c["id"]) ?? ""
        if (ids.has(id)) problems.push(`messages.[${i}].tool_calls: duplicate id ${id}`)
        const fn = isObj(c["function"]) ? c["function"] : {}
        if (!isJsonText(fn["arguments"])) problems.push(`messages.[${i}].tool_calls: arguments of ${id} must be a JSON string`)
        ids.add(id)
      }
      open = calls.map((c) => str(c["id"]) ?? "")
      inGroup = calls.length > 0
    } else if (role !== "system" && role !== "developer" && role !== "user") problems.push(`messages.[${i}].role: unknown role ${String(role)}`)
  })
  if (open.length > 0) problems.push(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(", ")}`)
  return problems
}

/**
 * OpenAI Responses: every `function_call` has a `function_call_output` with its `call_id`
 * later in `input`, every output names an earlier call, ids are unique, arguments are JSON
 * text, reasoning items carry their id.
 */
export const validateResponses = (body: unknown): Array<string> => {
  const problems: Array<string> = []
  if (!isObj(body)) return ["body: must be a JSON object"]
  const items = objs(body["input"])
  const calls = new Map<string, boolean>()
  items.forEach((item, i) => {
    const type = str(item["type"]) ?? "message"
    if (type === "function_call") {
      const id = str(item["call_id"]) ?? ""
      if (calls.has(id)) problems.push(`input[${i}]: duplicate call_id ${id}`)
      if (!isJsonText(item["arguments"])) problems.push(`input[${i}].arguments: must be a JSON string`)
      calls.set(id, false)
    } else if (type === "function_call_output") {
      const id = str(item["call_id"]) ?? ""
      if (!calls.has(id)) problems.push(`input[${i}]: No tool call found for function call output with call_id ${id}.`)
      else if (calls.get(id) === true) problems.push(`input[${i}]: duplicate output for call_id ${id}`)
      calls.set(id, true)
      const output = item["output"]
      if (typeof output !== "string" && objs(output).some((p) => p["type"] !== "input_text" && p["type"] !== "input_image" && p["type"] !== "input_file")) problems.push(`input[${i}].output: unsupported part`)
    } else if (type === "reasoning") {
      if ((str(item["id"]) ?? "").length === 0) problems.push(`input[${i}].id: reasoning items need their id`)
      if (!Array.isArray(item["summary"])) problems.push(`input[${i}].summary: Field required`)
    } else if (type === "message") {
      if (str(item["role"]) === "assistant" && Array.isArray(item["content"]) && objs(item["content"]).some((p) => p["prompt_cache_breakpoint"] !== undefined)) problems.push(`input[${i}]: prompt_cache_breakpoint is not allowed on assistant output`)
    }
  })
  for (const [id, answered] of calls) if (!answered) problems.push(`No tool output found for function call ${id}.`)
  return problems
}

/**
 * Bedrock Converse: alternating roles from a user turn; every `toolUse` answered by a
 * `toolResult` in the next (user) message; unique ids; no blank text; reasoning signed;
 * no `cachePoint` right after a reasoning block.
 */
export const validateConverse = (body: unknown): Array<string> => {
  const problems: Array<string> = []
  if (!isObj(body)) return ["body: must be a JSON object"]
  const messages = objs(body["messages"])
  if (messages.length === 0) problems.push("ValidationException: messages must not be empty")
  const ids = new Set<string>()
  let pending: Array<string> = []
  messages.forEach((m, i) => {
    const role = str(m["role"])
    if (i === 0 && role !== "user") problems.push("ValidationException: A conversation must start with a user message.")
    if (i > 0 && role === str(messages[i - 1]!["role"])) problems.push(`ValidationException: messages.${i}: A conversation must alternate between user and assistant roles.`)
    const blocks = objs(m["content"])
    if (blocks.length === 0) problems.push(`ValidationException: messages.${i}.content must not be empty`)
    const calls: Array<string> = []
    const answered = new Set<string>()
    blocks.forEach((b, k) => {
      const where = `messages.${i}.content.${k}`
      if (typeof b["text"] === "string" && b["text"].trim().length === 0) problems.push(`ValidationException: ${where}: text content blocks must contain non-whitespace text`)
      if (b["cachePoint"] !== undefined && k > 0 && blocks[k - 1]!["reasoningContent"] !== undefined) problems.push(`ValidationException: ${where}: a cachePoint cannot follow a reasoning block`)
      const reasoning = b["reasoningContent"]
      if (isObj(reasoning) && isObj(reasoning["reasoningText"]) && (str(reasoning["reasoningText"]["signature"]) ?? "").length === 0) problems.push(`ValidationException: ${where}: reasoningText needs its signature`)
      if (isObj(b["toolUse"])) {
        const id = str(b["toolUse"]["toolUseId"]) ?? ""
        if (role !== "assistant") problems.push(`ValidationException: ${where}: toolUse blocks belong to assistant messages`)
        if (ids.has(id)) problems.push(`ValidationException: ${where}: duplicate toolUseId ${id}`)
        ids.add(id)
        calls.push(id)
      }
      if (isObj(b["toolResult"])) {
        const id = str(b["toolResult"]["toolUseId"]) ?? ""
        if (!pending.includes(id)) problems.push(`ValidationException: The toolResult blocks at ${where} contain toolUseId ${id} that doesn't match any toolUse in the previous turn.`)
        answered.add(id)
      }
    })
    const missing = pending.filter((id) => !answered.has(id))
    if (missing.length > 0) problems.push(`ValidationException: Expected toolResult blocks at messages.${i}.content for the following Ids: ${missing.join(", ")}`)
    pending = calls
  })
  if (pending.length > 0) problems.push(`ValidationException: Expected toolResult blocks after messages.${messages.length - 1} for the following Ids: ${pending.join(", ")}`)
  return problems
}

/**
 * Gemini `generateContent` (REST shape): a model turn's `functionCall` parts answered by as
 * many `functionResponse` parts (same ids and names) in the next user turn.
 */
export const validateGemini = (body: unknown): Array<string> => {
  const problems: Array<string> = []
  if (!isObj(body)) return ["body: must be a JSON object"]
  const contents = objs(body["contents"])
  if (contents.length === 0) problems.push("contents: must not be empty")
  let pending: Array<Obj> = []
  contents.forEach((c, i) => {
    const role = str(c["role"])
    if (role !== "user" && role !== "model") problems.push(`contents[${i}].role: must be "user" or "model"`)
    const parts = objs(c["parts"])
    const calls = parts.flatMap((p) => (isObj(p["functionCall"]) ? [p["functionCall"]] : []))
    const responses = parts.flatMap((p) => (isObj(p["functionResponse"]) ? [p["functionResponse"]] : []))
    if (calls.length > 0 && role !== "model") problems.push(`contents[${i}]: functionCall parts belong to model turns`)
    if (pending.length > 0 || responses.length > 0) {
      if (responses.length !== pending.length) {
        problems.push(`contents[${i}]: Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.`)
      }
      for (const r of responses) {
        const match = pending.find((call) => call["name"] === r["name"] && (call["id"] === undefined || call["id"] === r["id"]))
        if (match === undefined) problems.push(`contents[${i}]: functionResponse ${String(r["id"])} (${String(r["name"])}) answers no functionCall of the previous turn`)
        if (!isObj(r["response"])) problems.push(`contents[${i}]: functionResponse.response must be an object`)
      }
    }
    pending = calls
  })
  if (pending.length > 0) problems.push("the last model turn's function calls have no responses")
  return problems
}
