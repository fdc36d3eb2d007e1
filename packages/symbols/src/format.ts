/**
 * The compact map format: path aliases and the legend, the per-file block model,
 * its hash and its rendering, and the flat file tree. A block renders from its
 * model alone and its hash covers the whole model, so equal hashes mean equal bytes.
 */
import type { PathAlias } from "@strata/core"
import { sha256 } from "@strata/core"
import type { SymbolInfo, SymbolKind } from "./syntax/model.ts"

/** Bumped whenever rendering changes, so hashes from an older format never match. */
export const FORMAT_VERSION = 1

/** A path alias: `token` (`@1/`) stands for `prefix` (a directory ending in `/`); core's type, which a session records. */
export type { PathAlias } from "@strata/core"

/** Options of `computeAliases`. */
export interface AliasOptions {
  /** At most this many aliases (`@1/` … `@9/`). Default 9. */
  readonly max?: number
  /** Only prefixes at least this long. Default 8. */
  readonly minLength?: number
  /** Only prefixes covering at least this many files. Default 3. */
  readonly minFiles?: number
}

/**
 * Choose path aliases for long directory prefixes shared by many files, greedily by
 * characters saved (counting only files not already covered by a longer chosen
 * alias). Deterministic: ties go to the longer, then alphabetically first prefix.
 *
 * @example
 * ```ts
 * import { computeAliases } from "@strata/symbols"
 * computeAliases(["packages/core/src/a.ts", "packages/core/src/b.ts", "packages/core/src/c.ts"])
 * // [{ token: "@1/", prefix: "packages/core/src/" }]
 * ```
 */
export const computeAliases = (paths: ReadonlyArray<string>, options: AliasOptions = {}): Array<PathAlias> => {
  const max = options.max ?? 9
  const minLength = options.minLength ?? 8
  const minFiles = options.minFiles ?? 3
  // Each directory prefix with the indices of the paths under it.
  const members = new Map<string, Array<number>>()
  paths.forEach((path, index) => {
    for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
      const prefix = path.slice(0, i + 1)
      const list = members.get(prefix)
      if (list === undefined) members.set(prefix, [index])
      else list.push(index)
    }
  })
  const candidates = [...members].filter(([prefix, list]) => prefix.length >= minLength && list.length >= minFiles)
  const chosen: Array<string> = []
  // The prefix length each path already gets replaced by a chosen alias.
  const covered = new Int32Array(paths.length)
  const tokenLength = 3
  while (chosen.length < max) {
    let best: { prefix: string; list: ReadonlyArray<number>; saving: number } | undefined
    for (const [prefix, list] of candidates) {
      if (chosen.includes(prefix)) continue
      let saving = 0
      for (const index of list) {
        const already = covered[index]!
        if (prefix.length > already) saving += prefix.length - Math.max(already, tokenLength)
      }
      if (
        best === undefined ||
        saving > best.saving ||
        (saving === best.saving && (prefix.length > best.prefix.length || (prefix.length === best.prefix.length && prefix < best.prefix)))
      ) {
        best = { prefix, list, saving }
      }
    }
    // An alias costs a legend line of about its own length; it must save more than that.
    if (best === undefined || best.saving <= best.prefix.length + 8) break
    chosen.push(best.prefix)
    for (const index of best.list) covered[index] = Math.max(covered[index]!, best.prefix.length)
  }
  return chosen.map((prefix, i) => ({ token: `@${i + 1}/`, prefix }))
}

/** The longest alias whose prefix starts `path`, if any. */
export const aliasFor = (path: string, aliases: ReadonlyArray<PathAlias>): PathAlias | undefined => {
  let best: PathAlias | undefined
  for (const a of aliases) if (path.startsWith(a.prefix) && (best === undefined || a.prefix.length > best.prefix.length)) best = a
  return best
}

/** `path` with its longest alias applied. */
export const applyAlias = (path: string, aliases: ReadonlyArray<PathAlias>): string => {
  const alias = aliasFor(path, aliases)
  return alias === undefined ? path : alias.token + path.slice(alias.prefix.length)
}

/** Short codes of symbol kinds (async functions and methods get `af` / `am`). */
export const KIND_CODES: Readonly<Record<SymbolKind, string>> = {
  class: "c",
  struct: "s",
  interface: "if",
  enum: "e",
  type: "t",
  namespace: "n",
  impl: "impl",
  function: "f",
  method: "m",
  property: "p",
  variable: "v",
  field: "v"
}

/** Options of the legend and blocks. */
export interface FormatOptions {
  /** Render `:LINE` after each symbol name (then line moves change the hash too). Default false. */
  readonly lines?: boolean
  /** At most this many `→` call targets per symbol before `+N`. Default 8. */
  readonly maxCalls?: number
}

/**
 * The legend: the abbreviation key and the path aliases. It ends with a newline.
 *
 * @example
 * ```ts
 * import { formatLegend } from "@strata/symbols"
 * formatLegend([{ token: "@1/", prefix: "src/app/" }])
 * // "# c=class s=struct …\n…\n# @1/=src/app/\n"
 * ```
 */
export const formatLegend = (aliases: ReadonlyArray<PathAlias>, options: FormatOptions = {}): string => {
  const lines = [
    "# c=class s=struct if=interface/trait e=enum t=type n=namespace/module impl=impl block",
    "# f=function af=async function m=method am=async method p=property v=variable/field",
    `# i=imports i→=repository files imported ${options.lines === true ? ":N=line " : ""}(a,b?)=params ?=optional ->T=returns`,
    "# c Name(Base,Iface)=bases ←N=used by N other files →=calls and uses +N=N more",
    ...aliases.map((a) => `# ${a.token}=${a.prefix}`)
  ]
  return `${lines.join("\n")}\n`
}

/** One rendered symbol of a block model. */
export interface BlockSymbol {
  readonly code: string
  readonly name: string
  /** Rendered parameter list without parentheses, or null when not callable. */
  readonly params: string | null
  readonly returns: string
  readonly bases: ReadonlyArray<string>
  readonly refs: number
  readonly calls: ReadonlyArray<string>
  readonly more: number
  /** Present only when lines are rendered. */
  readonly line?: number
  readonly children: ReadonlyArray<BlockSymbol>
}

/**
 * Everything a block renders, and nothing else: the hash covers exactly this, so
 * the bytes of a block are a pure function of its hash input.
 */
export interface BlockModel {
  readonly version: number
  readonly path: string
  readonly refs: number
  readonly external: ReadonlyArray<string>
  readonly local: ReadonlyArray<string>
  /** The aliases this block's paths use, `[token, prefix]`. */
  readonly aliases: ReadonlyArray<readonly [string, string]>
  readonly symbols: ReadonlyArray<BlockSymbol>
}

/** What `blockModel` needs about one file beyond its symbols. */
export interface BlockInput {
  readonly path: string
  readonly symbols: ReadonlyArray<SymbolInfo>
  /** Distinct other files referencing this file. */
  readonly refs: number
  /** Per top-level symbol name, distinct other files referencing it. */
  readonly symbolRefs?: ReadonlyMap<string, number>
  readonly external: ReadonlyArray<string>
  readonly local: ReadonlyArray<string>
  /** Resolved call targets per caller (dotted symbol name), in first-call order. */
  readonly calls?: ReadonlyMap<string, ReadonlyArray<string>>
}

const CLASS_LIKE = new Set<SymbolKind>(["class", "struct", "interface", "enum", "impl", "namespace"])

/** Types and containers first, then variables and fields, then functions, methods and properties. */
const GROUP: Readonly<Record<SymbolKind, number>> = {
  class: 0,
  struct: 0,
  interface: 0,
  enum: 0,
  type: 0,
  namespace: 0,
  impl: 0,
  variable: 1,
  field: 1,
  function: 2,
  method: 2,
  property: 2
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Siblings in canonical order (group, name, code), so moving code around a file
 * changes neither the block nor its hash.
 */
const canonical = (symbols: ReadonlyArray<SymbolInfo>): Array<SymbolInfo> =>
  [...symbols].sort(
    (a, b) =>
      GROUP[a.kind] - GROUP[b.kind] ||
      byCodeUnit(a.name, b.name) ||
      byCodeUnit(KIND_CODES[a.kind], KIND_CODES[b.kind]) ||
      // Namesakes of one kind (rare: a field and a variable) fall back to their whole shape.
      byCodeUnit(shapeOf(a), shapeOf(b))
  )

/** A position-free serialization of a symbol, for ordering namesakes. */
const shapeOf = (s: SymbolInfo): string =>
  JSON.stringify([s.kind, s.async, s.params, s.returns, s.bases, canonical(s.children).map(shapeOf)])

/**
 * The block model of one file: symbols in canonical order (types, then variables,
 * then functions; by name within each group), members indented, imports and call
 * targets sorted, counts filled in, and the aliases its paths use. Nothing in it
 * depends on where code sits in the file.
 */
export const blockModel = (input: BlockInput, aliases: ReadonlyArray<PathAlias>, options: FormatOptions = {}): BlockModel => {
  const maxCalls = options.maxCalls ?? 8
  const used = new Map<string, string>()
  const note = (path: string): void => {
    const alias = aliasFor(path, aliases)
    if (alias !== undefined) used.set(alias.token, alias.prefix)
  }
  note(input.path)
  for (const l of input.local) note(l)
  const build = (s: SymbolInfo, scope: string, depth: number): BlockSymbol => {
    const qualified = scope === "" ? s.name : `${scope}.${s.name}`
    const targets = input.calls?.get(qualified) ?? []
    const code = s.async && (s.kind === "function" || s.kind === "method") ? `a${KIND_CODES[s.kind]}` : KIND_CODES[s.kind]
    const symbol: BlockSymbol = {
      code,
      name: s.name,
      params: s.params === null || CLASS_LIKE.has(s.kind) ? null : s.params.map((p) => (p.optional ? `${p.name}?` : p.name)).join(","),
      returns: s.returns,
      bases: CLASS_LIKE.has(s.kind) ? s.bases : [],
      refs: depth === 0 && s.kind !== "impl" ? (input.symbolRefs?.get(s.name) ?? 0) : 0,
      calls: [...targets].sort(byCodeUnit).slice(0, maxCalls),
      more: Math.max(0, targets.length - maxCalls),
      children: canonical(s.children).map((c) => build(c, qualified, depth + 1))
    }
    return options.lines === true ? { ...symbol, line: s.line } : symbol
  }
  return {
    version: FORMAT_VERSION,
    path: input.path,
    refs: input.refs,
    external: [...input.external].sort(byCodeUnit),
    local: [...input.local].sort(byCodeUnit),
    aliases: [...used].sort((a, b) => byCodeUnit(a[0], b[0])),
    symbols: canonical(input.symbols).map((s) => build(s, "", 0))
  }
}

/**
 * The hash of a block: SHA-256 of its model. Line numbers are not in the model
 * (unless rendered), so moving code keeps it; anything rendered changes it.
 */
export const blockHash = (model: BlockModel): string => sha256(JSON.stringify(model))

const renderSymbol = (s: BlockSymbol, depth: number, out: Array<string>): void => {
  let line = `${"  ".repeat(depth)}${s.code} ${s.name}`
  if (s.line !== undefined) line += `:${s.line}`
  if (s.params !== null) line += `(${s.params})`
  else if (s.bases.length > 0) line += `(${s.bases.join(",")})`
  if (s.returns !== "") line += `->${s.returns}`
  if (s.refs > 0) line += ` ←${s.refs}`
  if (s.calls.length > 0) line += ` →${s.calls.join(",")}${s.more > 0 ? `,+${s.more}` : ""}`
  out.push(line)
  for (const c of s.children) renderSymbol(c, depth + 1, out)
}

/**
 * Render a block: `path: ←N`, `i` external imports, `i→` repository imports, then
 * symbols. It ends with a newline.
 *
 * @example
 * ```ts
 * import { blockModel, renderBlock } from "@strata/symbols"
 * renderBlock(blockModel({ path: "src/a.ts", symbols: [], refs: 2, external: ["react"], local: ["src/b.ts"] }, [])) // "src/a.ts: ←2\ni react\ni→ src/b.ts\n"
 * ```
 */
export const renderBlock = (model: BlockModel): string => {
  const aliases = model.aliases.map(([token, prefix]) => ({ token, prefix }))
  const out: Array<string> = [`${applyAlias(model.path, aliases)}:${model.refs > 0 ? ` ←${model.refs}` : ""}`]
  if (model.external.length > 0) out.push(`i ${model.external.join(",")}`)
  if (model.local.length > 0) out.push(`i→ ${model.local.map((p) => applyAlias(p, aliases)).join(",")}`)
  for (const s of model.symbols) renderSymbol(s, 0, out)
  return `${out.join("\n")}\n`
}

/**
 * The flat file tree: one path per line, sorted by code unit, each line ending with
 * a newline ("" for no files). It carries no header: the pipeline puts it under
 * `FILE_TREE_HEADER` ("# Repository Files …").
 *
 * @example
 * ```ts
 * import { formatFileTree } from "@strata/symbols"
 * formatFileTree(["src/b.ts", "README.md"]) // "README.md\nsrc/b.ts\n"
 * ```
 */
export const formatFileTree = (files: ReadonlyArray<string>): string => {
  const sorted = [...files].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return sorted.map((f) => `${f}\n`).join("")
}
