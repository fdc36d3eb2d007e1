/**
 * Rust extraction: `mod` declarations and `use` trees (as imports), structs, enums,
 * traits (with supertraits), `impl` blocks (`impl Trait for Type` keeps the trait as
 * a base), functions (async marked; `self` dropped), inline modules, type aliases,
 * constants, statics and macros.
 */
import type { ImportInfo, ImportName, Param } from "../../syntax/model.ts"
import type { TSNode } from "../../syntax/parser.ts"
import { normalizeType } from "../../syntax/typeText.ts"
import { type CalleeReader, type Draft, type Extraction, draft, fieldText, hasToken, memberCallee, named, normalizeBase } from "./common.ts"

const rustParams = (list: TSNode | null): Array<Param> => {
  if (list === null) return []
  const out: Array<Param> = []
  for (const p of named(list)) {
    if (p.type === "parameter") out.push({ name: normalizeType(fieldText(p, "pattern"), 24), optional: false })
    else if (p.type === "variadic_parameter") out.push({ name: "...", optional: false })
  }
  return out
}

const isAsync = (fn: TSNode): boolean => named(fn).some((c) => c.type === "function_modifiers" && hasToken(c, "async"))

const fnDraft = (fn: TSNode, kind: "function" | "method", at: TSNode = fn): Draft =>
  draft(kind, fieldText(fn, "name"), at, {
    async: isAsync(fn),
    params: rustParams(fn.childForFieldName("parameters")),
    returns: normalizeType(fieldText(fn, "return_type"))
  })

/** Flatten a use tree into `(module path, imported name, alias)` triples. */
const useTree = (node: TSNode, prefix: string, out: Array<{ path: string; name: ImportName }>): void => {
  const join = (a: string, b: string): string => (a === "" ? b : b === "" ? a : `${a}::${b}`)
  switch (node.type) {
    case "identifier":
    case "crate":
    case "super":
    case "self":
    case "metavariable":
      out.push({ path: prefix, name: { name: node.text, alias: node.text } })
      break
    case "scoped_identifier": {
      const path = node.childForFieldName("path")
      out.push({ path: join(prefix, path?.text.replace(/\s+/g, "") ?? ""), name: { name: fieldText(node, "name"), alias: fieldText(node, "name") } })
      break
    }
    case "use_as_clause": {
      const path = node.childForFieldName("path")
      const alias = fieldText(node, "alias")
      if (path === null) break
      const inner: Array<{ path: string; name: ImportName }> = []
      useTree(path, prefix, inner)
      for (const i of inner) out.push({ path: i.path, name: { name: i.name.name, alias } })
      break
    }
    case "use_wildcard": {
      const path = named(node)[0]
      out.push({ path: join(prefix, path?.text.replace(/\s+/g, "") ?? ""), name: { name: "*", alias: "*" } })
      break
    }
    case "scoped_use_list": {
      const path = node.childForFieldName("path")
      const list = node.childForFieldName("list")
      const next = join(prefix, path?.text.replace(/\s+/g, "") ?? "")
      if (list !== null) for (const c of named(list)) useTree(c, next, out)
      break
    }
    case "use_list":
      for (const c of named(node)) useTree(c, prefix, out)
      break
    default:
      break
  }
}

const useImports = (decl: TSNode): Array<ImportInfo> => {
  const argument = decl.childForFieldName("argument")
  if (argument === null) return []
  const flat: Array<{ path: string; name: ImportName }> = []
  useTree(argument, "", flat)
  // One import per module path, names in source order.
  const byPath = new Map<string, Array<ImportName>>()
  for (const { path, name } of flat) {
    const names = byPath.get(path) ?? []
    names.push(name)
    byPath.set(path, names)
  }
  return [...byPath].map(([path, names]) => ({ module: path, names, line: decl.startPosition.row + 1, form: "import" as const }))
}

const typeName = (node: TSNode | null): string => {
  if (node === null) return ""
  if (node.type === "generic_type") return typeName(node.childForFieldName("type"))
  if (node.type === "scoped_type_identifier") return fieldText(node, "name")
  return node.text.replace(/^&\s*(mut\s+)?/, "")
}

const items = (nodes: ReadonlyArray<TSNode>, imports: Array<ImportInfo>, inTrait: boolean): Array<Draft> => {
  const out: Array<Draft> = []
  for (const item of nodes) {
    switch (item.type) {
      case "mod_item": {
        const name = fieldText(item, "name")
        const body = item.childForFieldName("body")
        if (body === null) imports.push({ module: name, names: [{ name: "*", alias: name }], line: item.startPosition.row + 1, form: "mod" })
        else out.push(draft("namespace", name, item, { children: items(named(body), imports, false) }))
        break
      }
      case "use_declaration":
        imports.push(...useImports(item))
        break
      case "function_item":
      case "function_signature_item":
        out.push(fnDraft(item, inTrait ? "method" : "function"))
        break
      case "struct_item":
      case "union_item": {
        const body = item.childForFieldName("body")
        const fields =
          body?.type === "field_declaration_list"
            ? named(body)
                .filter((f) => f.type === "field_declaration")
                .map((f) => draft("field", fieldText(f, "name"), f))
            : []
        out.push(draft("struct", fieldText(item, "name"), item, { children: fields }))
        break
      }
      case "enum_item":
        out.push(draft("enum", fieldText(item, "name"), item))
        break
      case "trait_item": {
        const bounds = item.childForFieldName("bounds")
        const body = item.childForFieldName("body")
        out.push(
          draft("interface", fieldText(item, "name"), item, {
            bases: bounds === null ? [] : named(bounds).map((b) => normalizeBase(b.text)),
            children: body === null ? [] : items(named(body), imports, true)
          })
        )
        break
      }
      case "impl_item": {
        const trait = item.childForFieldName("trait")
        const body = item.childForFieldName("body")
        const children = body === null ? [] : items(named(body), imports, true)
        // Trait impls for one type are distinct blocks, so the trait is part of the name.
        const type = typeName(item.childForFieldName("type"))
        out.push(draft("impl", trait === null ? type : `${normalizeType(trait.text)} for ${type}`, item, { children }))
        break
      }
      case "type_item":
        out.push(draft("type", fieldText(item, "name"), item))
        break
      case "const_item":
      case "static_item":
        out.push(draft(inTrait ? "field" : "variable", fieldText(item, "name"), item))
        break
      case "macro_definition":
        out.push(draft("function", `${fieldText(item, "name")}!`, item))
        break
      default:
        break
    }
  }
  return out
}

/** Extract imports and symbols from a Rust tree. */
export const extractRust = (root: TSNode): Extraction => {
  const imports: Array<ImportInfo> = []
  const symbols = items(named(root), imports, false)
  return { imports, symbols }
}

export const RUST_CALLS = `
(call_expression function: (_) @callee)
(struct_expression name: (_) @callee)
`

export const readRustCallee: CalleeReader = (node) => {
  switch (node.type) {
    case "identifier":
    case "type_identifier":
      return { name: node.text, qualifier: "" }
    case "scoped_identifier":
    case "scoped_type_identifier": {
      const path = node.childForFieldName("path")
      return { name: fieldText(node, "name"), qualifier: path === null ? "" : path.text.replace(/\s+/g, "").replace(/<.*$/s, "") }
    }
    case "field_expression":
      return memberCallee(node, "field", "value")
    case "generic_function": {
      const inner = node.childForFieldName("function")
      return inner === null ? undefined : readRustCallee(inner, "callee")
    }
    default:
      return undefined
  }
}
