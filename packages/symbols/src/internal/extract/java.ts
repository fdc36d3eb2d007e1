/**
 * Java extraction: imports (static and wildcard), classes with superclass and
 * interfaces, interfaces, enums, records, annotation types, constructors, methods
 * and fields, nested types included.
 */
import type { ImportInfo, Param } from "../../syntax/model.ts"
import type { TSNode } from "../../syntax/parser.ts"
import { normalizeType } from "../../syntax/typeText.ts"
import { type CalleeReader, type Draft, type Extraction, draft, fieldText, memberCallee, named, normalizeBase, splitCallee } from "./common.ts"

const javaParams = (list: TSNode | null): Array<Param> => {
  if (list === null) return []
  const out: Array<Param> = []
  for (const p of named(list)) {
    if (p.type === "formal_parameter") out.push({ name: fieldText(p, "name"), optional: false })
    else if (p.type === "spread_parameter") {
      const declarator = named(p).find((c) => c.type === "variable_declarator")
      out.push({ name: `...${declarator === undefined ? "" : fieldText(declarator, "name")}`, optional: false })
    }
  }
  return out
}

const TYPE_DECLS = new Set(["class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration"])

const basesOf = (decl: TSNode): Array<string> => {
  const bases: Array<string> = []
  const superclass = decl.childForFieldName("superclass")
  if (superclass !== null) for (const t of named(superclass)) bases.push(normalizeBase(t.text))
  const interfaces = decl.childForFieldName("interfaces")
  const extendsInterfaces = named(decl).find((c) => c.type === "extends_interfaces")
  for (const clause of [interfaces, extendsInterfaces]) {
    if (clause === null || clause === undefined) continue
    for (const list of named(clause)) for (const t of list.type === "type_list" ? named(list) : [list]) bases.push(normalizeBase(t.text))
  }
  return bases
}

const members = (body: TSNode | null): Array<Draft> => {
  if (body === null) return []
  const fields: Array<Draft> = []
  const rest: Array<Draft> = []
  const visit = (nodes: ReadonlyArray<TSNode>): void => {
    for (const m of nodes) {
      switch (m.type) {
        case "method_declaration":
        case "constructor_declaration":
        case "compact_constructor_declaration":
          rest.push(
            draft("method", fieldText(m, "name"), m, {
              params: javaParams(m.childForFieldName("parameters")),
              returns: m.type === "method_declaration" ? normalizeType(fieldText(m, "type")) : ""
            })
          )
          break
        case "field_declaration":
        case "constant_declaration":
          for (const d of m.childrenForFieldName("declarator")) if (d !== null) fields.push(draft("field", fieldText(d, "name"), m))
          break
        case "enum_body_declarations":
          visit(named(m))
          break
        default:
          if (TYPE_DECLS.has(m.type)) rest.push(typeDraft(m))
      }
    }
  }
  visit(named(body))
  return [...fields, ...rest]
}

const typeDraft = (decl: TSNode): Draft => {
  const kind = decl.type === "interface_declaration" || decl.type === "annotation_type_declaration" ? "interface" : decl.type === "enum_declaration" ? "enum" : "class"
  // Record components are its fields.
  const components =
    decl.type === "record_declaration"
      ? named(decl.childForFieldName("parameters") ?? decl)
          .filter((p) => p.type === "formal_parameter")
          .map((p) => draft("field", fieldText(p, "name"), p))
      : []
  const children = [...components, ...members(decl.childForFieldName("body"))]
  return draft(kind, fieldText(decl, "name"), decl, { bases: basesOf(decl), children })
}

/** Extract imports and symbols from a Java tree. */
export const extractJava = (root: TSNode): Extraction => {
  const imports: Array<ImportInfo> = []
  const symbols: Array<Draft> = []
  for (const node of named(root)) {
    if (node.type === "import_declaration") {
      const path = named(node).find((c) => c.type === "scoped_identifier" || c.type === "identifier")
      if (path === undefined) continue
      const wildcard = named(node).some((c) => c.type === "asterisk")
      const text = path.text.replace(/\s+/g, "")
      const last = text.split(".").pop() ?? text
      imports.push({
        module: wildcard ? `${text}.*` : text,
        names: [{ name: wildcard ? "*" : last, alias: wildcard ? "*" : last }],
        line: node.startPosition.row + 1,
        form: "import"
      })
    } else if (TYPE_DECLS.has(node.type)) {
      symbols.push(typeDraft(node))
    }
  }
  return { imports, symbols }
}

export const JAVA_CALLS = `
(method_invocation) @callee
(object_creation_expression type: (_) @callee)
`

export const readJavaCallee: CalleeReader = (node) => {
  switch (node.type) {
    case "method_invocation":
      return memberCallee(node, "name", "object")
    case "type_identifier":
      return { name: node.text, qualifier: "" }
    case "generic_type": {
      const inner = named(node)[0]
      return inner === undefined ? undefined : readJavaCallee(inner, "callee")
    }
    case "scoped_type_identifier":
      return splitCallee(node.text, ".")
    default:
      return undefined
  }
}
