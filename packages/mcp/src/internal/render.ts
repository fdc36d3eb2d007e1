// The text each tool returns. Every list is sorted and every cut says what it left out,
// so the same call on an unchanged repository returns the same bytes.
import { estimateTokens } from "@strata/core"
import type { SymbolInfo, SymbolMap } from "@strata/symbols"

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** `name(a, b?) -> T`, `Name(Base, Iface)`, or the bare name. */
export const signature = (s: SymbolInfo, qualified: string = s.name): string => {
  let text = qualified
  if (s.params !== null && s.kind !== "class" && s.kind !== "interface" && s.kind !== "struct") {
    text += `(${s.params.map((p) => (p.optional ? `${p.name}?` : p.name)).join(", ")})`
  } else if (s.bases.length > 0) {
    text += `(${s.bases.join(", ")})`
  }
  if (s.returns !== "") text += ` -> ${s.returns}`
  return `${s.async ? "async " : ""}${s.kind} ${text}`
}

/** A symbol found by name: where it is defined. */
export interface Definition {
  readonly path: string
  readonly qualified: string
  readonly symbol: SymbolInfo
}

/** Every definition named `name` (or `Outer.name` dotted), sorted by path, then line. */
export const findDefinitions = (map: SymbolMap, name: string, kind: string | undefined): Array<Definition> => {
  const out: Array<Definition> = []
  const visit = (path: string, s: SymbolInfo, scope: string): void => {
    const qualified = scope === "" ? s.name : `${scope}.${s.name}`
    if ((s.name === name || qualified === name) && (kind === undefined || s.kind === kind)) out.push({ path, qualified, symbol: s })
    for (const c of s.children) visit(path, c, qualified)
  }
  for (const path of map.symbolFiles) for (const s of map.symbols(path)?.symbols ?? []) visit(path, s, "")
  return out.sort((a, b) => byCodeUnit(a.path, b.path) || a.symbol.line - b.symbol.line || byCodeUnit(a.qualified, b.qualified))
}

/** One use of a symbol: a call site or an import. */
export interface Reference {
  readonly path: string
  readonly line: number
  /** `call in <caller>`, `call at top level`, `import`. */
  readonly how: string
  /** The file the symbol is defined in. */
  readonly target: string
}

/** Uses of `name` from other files (resolved calls and imports), optionally of the definition in `target` only. */
export const findReferences = (map: SymbolMap, name: string, target: string | undefined): Array<Reference> => {
  const out: Array<Reference> = []
  const seen = new Set<string>()
  const push = (ref: Reference): void => {
    const key = `${ref.path}\u0000${ref.line}\u0000${ref.how}\u0000${ref.target}`
    if (seen.has(key)) return
    seen.add(key)
    out.push(ref)
  }
  for (const path of map.symbolFiles) {
    for (const call of map.calls(path) ?? []) {
      const symbol = call.symbol === "" ? call.name : call.symbol
      if (symbol !== name || call.file === path || (target !== undefined && call.file !== target)) continue
      push({ path, line: call.line, how: call.caller === "" ? "call at top level" : `call in ${call.caller}`, target: call.file })
    }
    const imports = map.imports(path)
    const file = map.symbols(path)
    if (imports === undefined || file === undefined) continue
    for (const [local, binding] of imports.bindings) {
      if (binding.symbol !== name) continue
      for (const into of binding.files) {
        if (into === path || (target !== undefined && into !== target)) continue
        const statement = file.imports.find((i) => i.names.some((n) => n.alias === local))
        push({ path, line: statement?.line ?? 0, how: "import", target: into })
      }
    }
  }
  return out.sort((a, b) => byCodeUnit(a.path, b.path) || a.line - b.line || byCodeUnit(a.how, b.how) || byCodeUnit(a.target, b.target))
}

/** The outline of one file: its imports, then every symbol with its line range, members indented. */
export const outline = (map: SymbolMap, path: string): string => {
  const file = map.symbols(path)!
  const resolved = map.imports(path)
  const lines: Array<string> = [`${path} (${file.language}) used by ${map.refCounts.get(path) ?? 0} other files`]
  if (resolved !== undefined && resolved.external.length > 0) lines.push(`imports: ${[...resolved.external].sort(byCodeUnit).join(", ")}`)
  if (resolved !== undefined && resolved.local.length > 0) lines.push(`imports from the repository: ${[...resolved.local].sort(byCodeUnit).join(", ")}`)
  const sorted = (symbols: ReadonlyArray<SymbolInfo>): Array<SymbolInfo> =>
    [...symbols].sort((a, b) => a.line - b.line || byCodeUnit(a.name, b.name))
  const visit = (s: SymbolInfo, depth: number): void => {
    const range = s.endLine > s.line ? `${s.line}-${s.endLine}` : `${s.line}`
    lines.push(`${"  ".repeat(depth)}${range} ${signature(s)}`)
    for (const c of sorted(s.children)) visit(c, depth + 1)
  }
  for (const s of sorted(file.symbols)) visit(s, 0)
  if (file.errors.length > 0) lines.push(`# parse problems: ${file.errors.map((e) => (e.line > 0 ? `line ${e.line}: ${e.message}` : e.message)).join("; ")}`)
  return `${lines.join("\n")}\n`
}

/**
 * Lines cut to a token budget (chars/4 estimate, so every client counts alike): whole
 * lines from the top while they fit, then one line naming how many were left out.
 */
export const cutLines = (lines: ReadonlyArray<string>, budget: number, what: string): string => {
  const all = lines.map((l) => `${l}\n`).join("")
  if (estimateTokens(all) <= budget) return all
  const note = (left: number) => `# ${left} more ${what} left out to fit ${budget} tokens; ask with a larger budget or a narrower query\n`
  let chars = 0
  let kept = 0
  // Counted by length, as estimateTokens does, so a long list is not re-joined per line.
  while (kept < lines.length && Math.ceil((chars + lines[kept]!.length + 1 + note(lines.length - kept - 1).length) / 4) <= budget) {
    chars += lines[kept]!.length + 1
    kept++
  }
  return lines.slice(0, kept).map((l) => `${l}\n`).join("") + note(lines.length - kept)
}
