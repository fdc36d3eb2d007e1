/**
 * Shared pieces of the per-language extractors: symbol drafts (symbols that still
 * carry byte ranges, used to attribute call sites), text normalization and
 * call-site collection through a tree-sitter query.
 */
import type { CallSite, ImportInfo, Param, SymbolInfo, SymbolKind } from "../../syntax/model.ts"
import type { TSNode, TSQuery, TSTree } from "../../syntax/parser.ts"
import { normalizeType } from "../../syntax/typeText.ts"

/** A symbol under construction: a `SymbolInfo` plus its byte range. */
export interface Draft {
  kind: SymbolKind
  name: string
  async: boolean
  params: Array<Param> | null
  returns: string
  bases: Array<string>
  children: Array<Draft>
  line: number
  endLine: number
  start: number
  end: number
}

/** What an extractor returns before call sites are attributed. */
export interface Extraction {
  readonly imports: Array<ImportInfo>
  readonly symbols: Array<Draft>
}

const MAX_BASE_CHARS = 40

/**
 * A base class or interface as the map shows it: normalized, and when long, its
 * type or call arguments elided (`Context.Service<…>`), since they are mostly noise.
 *
 * @example
 * ```ts
 * import { normalizeBase } from "./common.ts"
 * normalizeBase("Schema.TaggedError<E>()(\"E\", { a: Schema.String, b: Schema.Number })") // "Schema.TaggedError<…>"
 * ```
 */
export const normalizeBase = (text: string): string => {
  const base = normalizeType(text, Number.MAX_SAFE_INTEGER)
  if (base.length <= MAX_BASE_CHARS) return base
  const cut = base.search(/[<(]/)
  if (cut > 0) return `${base.slice(0, cut)}${base[cut] === "<" ? "<…>" : "(…)"}`
  return normalizeType(base, MAX_BASE_CHARS)
}

/** A draft for `node`, named `name`. */
export const draft = (
  kind: SymbolKind,
  name: string,
  node: TSNode,
  extra: Partial<Pick<Draft, "async" | "params" | "returns" | "bases" | "children">> = {}
): Draft => ({
  kind,
  name,
  async: extra.async ?? false,
  params: extra.params ?? null,
  returns: extra.returns ?? "",
  bases: extra.bases ?? [],
  children: extra.children ?? [],
  line: node.startPosition.row + 1,
  endLine: node.endPosition.row + 1,
  start: node.startIndex,
  end: node.endIndex
})

/** The text of field `field` of `node`, or "" when absent. */
export const fieldText = (node: TSNode, field: string): string => node.childForFieldName(field)?.text ?? ""

/** Named children that are not null (the binding types them as nullable). */
export const named = (node: TSNode): Array<TSNode> => node.namedChildren.filter((c): c is TSNode => c !== null)

/** The anonymous tokens among `node`'s children (`async`, `get`, `?`, …), in one binding call. */
export const tokens = (node: TSNode): ReadonlySet<string> => {
  const out = new Set<string>()
  for (const child of node.children) if (child !== null && !child.isNamed) out.add(child.type)
  return out
}

/** Whether `node` has an anonymous child token `token` (e.g. `async`, `static`). */
export const hasToken = (node: TSNode, token: string): boolean => tokens(node).has(token)

const isContainer = (kind: SymbolKind): boolean => kind === "impl" || kind === "namespace"

/**
 * Siblings with the same kind and name collapse into the first (overloads, getter and
 * setter pairs, a C prototype and its definition); containers (impl blocks,
 * namespaces) merge their members instead.
 */
export const dedupe = (drafts: ReadonlyArray<Draft>): Array<Draft> => {
  const seen = new Map<string, Draft>()
  const out: Array<Draft> = []
  for (const d of drafts) {
    const key = `${d.kind}\u0000${d.name}`
    const first = seen.get(key)
    if (first === undefined) {
      seen.set(key, d)
      out.push(d)
    } else if (isContainer(d.kind)) {
      first.children.push(...d.children)
    } else if (first.returns === "") {
      // A setter before its getter, or a prototype without a return type: keep the type.
      first.returns = d.returns
    }
  }
  for (const d of out) d.children = dedupe(d.children)
  return out
}

/** Strip ranges: the cached and rendered form of a draft. */
export const toSymbolInfo = (d: Draft): SymbolInfo => ({
  kind: d.kind,
  name: d.name,
  async: d.async,
  params: d.params,
  returns: d.returns,
  bases: d.bases,
  children: d.children.map(toSymbolInfo),
  line: d.line,
  endLine: d.endLine
})

interface Span {
  readonly start: number
  readonly end: number
  readonly name: string
}

const spansOf = (drafts: ReadonlyArray<Draft>, prefix: string, out: Array<Span>): Array<Span> => {
  for (const d of drafts) {
    const name = prefix === "" ? d.name : `${prefix}.${d.name}`
    out.push({ start: d.start, end: d.end, name })
    spansOf(d.children, name, out)
  }
  return out
}

/**
 * Reads the callee name and qualifier from a captured node (`capture` is the query's
 * capture name, so one reader can treat `@jsx` apart from `@callee`); undefined to skip.
 */
export type CalleeReader = (node: TSNode, capture: string) => Callee | undefined

/** A call's target: its name, and what it is called on (`""` when nothing or not a plain name). */
export interface Callee {
  readonly name: string
  readonly qualifier: string
}

/** A callee written out whole, `qualifier<separator>name` (`a.b.C`, `ns::f`): split at the last separator. */
export const splitCallee = (text: string, separator: string): Callee => {
  const at = text.lastIndexOf(separator)
  return { name: text.slice(at + separator.length), qualifier: text.slice(0, at) }
}

/** A member call `x.f()`: the member's name, qualified by the receiver when that is a plain identifier. */
export const memberCallee = (node: TSNode, member: string, receiver: string): Callee => {
  const on = node.childForFieldName(receiver)
  return { name: fieldText(node, member), qualifier: on?.type === "identifier" ? on.text : "" }
}

/**
 * Run `query` (whose captures are callee nodes) and attribute each call to the
 * innermost symbol containing it.
 */
export const collectCalls = (
  tree: TSTree,
  query: TSQuery,
  read: CalleeReader,
  symbols: ReadonlyArray<Draft>
): Array<CallSite> => {
  const spans = spansOf(symbols, "", []).sort((a, b) => a.start - b.start || b.end - a.end)
  const out: Array<CallSite> = []
  const stack: Array<Span> = []
  let next = 0
  for (const capture of query.captures(tree.rootNode)) {
    const node = capture.node
    const at = node.startIndex
    // Sweep: captures come in document order, so spans open and close monotonically.
    while (next < spans.length && spans[next]!.start <= at) {
      const span = spans[next++]!
      while (stack.length > 0 && stack[stack.length - 1]!.end <= span.start) stack.pop()
      stack.push(span)
    }
    while (stack.length > 0 && stack[stack.length - 1]!.end <= at) stack.pop()
    const callee = read(node, capture.name)
    if (callee === undefined || callee.name === "") continue
    out.push({
      name: callee.name,
      qualifier: callee.qualifier,
      line: node.startPosition.row + 1,
      caller: stack.length > 0 ? stack[stack.length - 1]!.name : ""
    })
  }
  return out
}

/** A dotted name (`a`, `a.b.c`) or "" when `node` is anything more complex. */
export const dottedName = (node: TSNode | null, memberTypes: ReadonlyArray<string>, objectField: string, propertyField: string): string => {
  if (node === null) return ""
  if (node.type === "identifier" || node.type === "this" || node.type === "self") return node.text
  if (memberTypes.includes(node.type)) {
    const object = dottedName(node.childForFieldName(objectField), memberTypes, objectField, propertyField)
    const property = node.childForFieldName(propertyField)
    if (object === "" || property === null) return ""
    return `${object}.${property.text}`
  }
  return ""
}

/**
 * The first syntax errors tree-sitter recovered from, found by descending only into
 * subtrees that contain one.
 */
export const findErrors = (root: TSNode, limit = 5): Array<{ line: number; message: string }> => {
  const out: Array<{ line: number; message: string }> = []
  const visit = (node: TSNode): void => {
    if (out.length >= limit) return
    if (node.isMissing) {
      out.push({ line: node.startPosition.row + 1, message: `missing ${node.type}` })
      return
    }
    if (node.isError) {
      out.push({ line: node.startPosition.row + 1, message: "syntax error" })
      return
    }
    for (let i = 0; i < node.childCount && out.length < limit; i++) {
      const child = node.child(i)
      if (child !== null && (child.hasError || child.isMissing)) visit(child)
    }
  }
  if (root.hasError) visit(root)
  return out
}
