/**
 * Go extraction: imports (with package aliases), struct and interface types (with
 * embedded types as bases), other named types, functions, methods (attached to their
 * receiver type when it is declared in the same file), constants and variables.
 */
import type { ImportName, Param } from "../../syntax/model.ts"
import type { TSNode } from "../../syntax/parser.ts"
import { normalizeType } from "../../syntax/typeText.ts"
import { type CalleeReader, type Draft, type Extraction, draft, fieldText, memberCallee, named, normalizeBase } from "./common.ts"

const goParams = (list: TSNode | null): Array<Param> => {
  if (list === null) return []
  const out: Array<Param> = []
  for (const p of named(list)) {
    if (p.type !== "parameter_declaration" && p.type !== "variadic_parameter_declaration") continue
    const names = p.childrenForFieldName("name").filter((n): n is TSNode => n !== null)
    const prefix = p.type === "variadic_parameter_declaration" ? "..." : ""
    if (names.length === 0) out.push({ name: `${prefix}_`, optional: false })
    for (const n of names) out.push({ name: `${prefix}${n.text}`, optional: false })
  }
  return out
}

const resultOf = (node: TSNode): string => {
  const result = node.childForFieldName("result")
  return result === null ? "" : normalizeType(result.text)
}

const receiverType = (method: TSNode): string => {
  const receiver = method.childForFieldName("receiver")
  const param = receiver === null ? undefined : named(receiver)[0]
  const type = param?.childForFieldName("type")
  if (type === null || type === undefined) return ""
  // `*Point`, `Point[T]` and `*Point[T]` all attach to Point.
  return type.text.replace(/^\*/, "").replace(/\[.*$/s, "").trim()
}

const typeDraft = (spec: TSNode): Draft | undefined => {
  const name = fieldText(spec, "name")
  const type = spec.childForFieldName("type")
  if (name === "" || type === null) return undefined
  if (type.type === "struct_type") {
    const fields: Array<Draft> = []
    const bases: Array<string> = []
    const list = named(type).find((c) => c.type === "field_declaration_list")
    for (const f of list === undefined ? [] : named(list)) {
      if (f.type !== "field_declaration") continue
      const names = f.childrenForFieldName("name").filter((n): n is TSNode => n !== null)
      if (names.length === 0) bases.push(normalizeBase(fieldText(f, "type").replace(/^\*/, "")))
      for (const n of names) fields.push(draft("field", n.text, f))
    }
    return draft("struct", name, spec, { bases, children: fields })
  }
  if (type.type === "interface_type") {
    const methods: Array<Draft> = []
    const bases: Array<string> = []
    for (const m of named(type)) {
      if (m.type === "method_elem" || m.type === "method_spec") {
        methods.push(draft("method", fieldText(m, "name"), m, { params: goParams(m.childForFieldName("parameters")), returns: resultOf(m) }))
      } else if (m.type === "type_elem" || m.type === "constraint_elem") {
        bases.push(normalizeBase(m.text))
      }
    }
    return draft("interface", name, spec, { bases, children: methods })
  }
  return draft("type", name, spec)
}

/** Extract imports and symbols from a Go tree. */
export const extractGo = (root: TSNode): Extraction => {
  const imports: Extraction["imports"] = []
  const symbols: Array<Draft> = []
  const methods: Array<{ readonly receiver: string; readonly method: Draft }> = []
  for (const decl of named(root)) {
    switch (decl.type) {
      case "import_declaration": {
        const specs = named(decl).flatMap((c) => (c.type === "import_spec_list" ? named(c) : [c]))
        for (const spec of specs) {
          if (spec.type !== "import_spec") continue
          const path = fieldText(spec, "path").replace(/^["`]|["`]$/g, "")
          const alias = fieldText(spec, "name")
          const names: Array<ImportName> = alias === "_" ? [] : [{ name: "*", alias: alias === "" ? (path.split("/").pop() ?? path) : alias }]
          imports.push({ module: path, names, line: spec.startPosition.row + 1, form: "import" })
        }
        break
      }
      case "function_declaration":
        symbols.push(draft("function", fieldText(decl, "name"), decl, { params: goParams(decl.childForFieldName("parameters")), returns: resultOf(decl) }))
        break
      case "method_declaration":
        methods.push({
          receiver: receiverType(decl),
          method: draft("method", fieldText(decl, "name"), decl, { params: goParams(decl.childForFieldName("parameters")), returns: resultOf(decl) })
        })
        break
      case "type_declaration":
        for (const spec of named(decl)) {
          if (spec.type === "type_spec") {
            const d = typeDraft(spec)
            if (d !== undefined) symbols.push(d)
          } else if (spec.type === "type_alias") {
            symbols.push(draft("type", fieldText(spec, "name"), spec))
          }
        }
        break
      case "const_declaration":
      case "var_declaration": {
        const specs = named(decl).flatMap((c) => (c.type === "var_spec_list" || c.type === "const_spec_list" ? named(c) : [c]))
        for (const spec of specs) {
          if (spec.type !== "const_spec" && spec.type !== "var_spec") continue
          for (const n of spec.childrenForFieldName("name")) if (n !== null && n.text !== "_") symbols.push(draft("variable", n.text, spec))
        }
        break
      }
      default:
        break
    }
  }
  // Methods join their receiver's type when it is declared here; the rest stay top level as `T.m`.
  const types = new Map(symbols.filter((s) => s.kind === "struct" || s.kind === "type" || s.kind === "interface").map((s) => [s.name, s]))
  for (const { receiver, method } of methods) {
    const owner = types.get(receiver)
    if (owner !== undefined) owner.children.push(method)
    else symbols.push({ ...method, name: receiver === "" ? method.name : `${receiver}.${method.name}` })
  }
  symbols.sort((a, b) => a.start - b.start)
  return { imports, symbols }
}

/** Calls plus qualified type references (`pkg.Type`), which tie files across packages. */
export const GO_CALLS = `
(call_expression function: (_) @callee)
(qualified_type) @callee
(composite_literal type: (type_identifier) @callee)
`

export const readGoCallee: CalleeReader = (node) => {
  switch (node.type) {
    case "identifier":
    case "type_identifier":
      return { name: node.text, qualifier: "" }
    case "selector_expression":
      return memberCallee(node, "field", "operand")
    case "qualified_type":
      return { name: fieldText(node, "name"), qualifier: fieldText(node, "package") }
    case "generic_type": {
      const inner = node.childForFieldName("type")
      return inner === null ? undefined : readGoCallee(inner, "callee")
    }
    default:
      return undefined
  }
}
