/**
 * C and C++ extraction (both through the C++ grammar): `#include`s, namespaces,
 * classes/structs/unions with bases and members, enums, typedefs, functions and
 * prototypes, out-of-class method definitions (attached to their class when it is
 * declared in the same file) and global variables. Preprocessor conditionals and
 * `extern "C"` blocks are looked through.
 */
import type { ImportInfo, Param } from "../../syntax/model.ts"
import type { TSNode } from "../../syntax/parser.ts"
import { normalizeType } from "../../syntax/typeText.ts"
import { type CalleeReader, type Draft, type Extraction, draft, fieldText, memberCallee, named, normalizeBase, splitCallee } from "./common.ts"

const WRAPPERS = new Set(["pointer_declarator", "reference_declarator", "array_declarator", "parenthesized_declarator", "attributed_declarator"])

/** The function_declarator inside a declarator, if it declares a function. */
const functionDeclarator = (node: TSNode | null): TSNode | undefined => {
  let current = node
  while (current !== null) {
    if (current.type === "function_declarator") return current
    if (!WRAPPERS.has(current.type)) return undefined
    current = current.childForFieldName("declarator") ?? named(current).find((c) => c.type.endsWith("declarator")) ?? null
  }
  return undefined
}

const isPointer = (node: TSNode | null): string => {
  let stars = ""
  let current = node
  while (current !== null && WRAPPERS.has(current.type)) {
    if (current.type === "pointer_declarator") stars += "*"
    else if (current.type === "reference_declarator") stars += "&"
    current = current.childForFieldName("declarator")
  }
  return stars
}

/** The declared name, unwrapping pointers, references and arrays. */
const declaredName = (node: TSNode | null): string => {
  let current = node
  while (current !== null) {
    switch (current.type) {
      case "identifier":
      case "field_identifier":
      case "type_identifier":
      case "qualified_identifier":
      case "destructor_name":
      case "operator_name":
      case "template_function":
        return current.text.replace(/\s+/g, "")
      case "init_declarator":
      case "function_declarator":
        current = current.childForFieldName("declarator")
        break
      default:
        if (!WRAPPERS.has(current.type)) return ""
        current = current.childForFieldName("declarator") ?? named(current).find((c) => c.type.endsWith("declarator") || c.type === "identifier") ?? null
    }
  }
  return ""
}

const cParams = (list: TSNode | null): Array<Param> => {
  if (list === null) return []
  const out: Array<Param> = []
  for (const p of named(list)) {
    if (p.type === "variadic_parameter" || p.type === "variadic_parameter_declaration") {
      out.push({ name: "...", optional: false })
    } else if (p.type === "parameter_declaration" || p.type === "optional_parameter_declaration") {
      const declarator = p.childForFieldName("declarator")
      const name = declaredName(declarator)
      const typeText = fieldText(p, "type")
      // An unnamed prototype parameter (`int add(int, int)`) shows its type; `(void)` shows nothing.
      if (name === "" && typeText === "void" && declarator === null) continue
      out.push({ name: name === "" ? normalizeType(typeText, 24) : name, optional: p.type === "optional_parameter_declaration" })
    }
  }
  if (list.text.includes("...") && !out.some((p) => p.name === "...")) out.push({ name: "...", optional: false })
  return out
}

const functionDraft = (node: TSNode, declarator: TSNode, fn: TSNode, kind: "function" | "method", at: TSNode): Draft => {
  const type = fieldText(node, "type")
  const stars = isPointer(declarator)
  return draft(kind, declaredName(fn.childForFieldName("declarator")), at, {
    params: cParams(fn.childForFieldName("parameters")),
    returns: type === "" ? "" : normalizeType(`${type}${stars}`)
  })
}

const RECORDS: Readonly<Record<string, "class" | "struct">> = { class_specifier: "class", struct_specifier: "struct", union_specifier: "struct" }

const recordDraft = (spec: TSNode, name: string, at: TSNode): Draft => {
  const bases: Array<string> = []
  const clause = named(spec).find((c) => c.type === "base_class_clause")
  if (clause !== undefined) for (const b of named(clause)) if (b.type !== "access_specifier") bases.push(normalizeBase(b.text))
  const body = spec.childForFieldName("body")
  return draft(RECORDS[spec.type] ?? "struct", name, at, { bases, children: body === null ? [] : members(named(body)) })
}

const members = (nodes: ReadonlyArray<TSNode>): Array<Draft> => {
  const fields: Array<Draft> = []
  const rest: Array<Draft> = []
  for (const m of nodes) {
    switch (m.type) {
      case "field_declaration":
      case "declaration": {
        const type = m.childForFieldName("type")
        if (type !== null && RECORDS[type.type] !== undefined && type.childForFieldName("body") !== null) {
          rest.push(recordDraft(type, fieldText(type, "name"), m))
        }
        for (const d of m.childrenForFieldName("declarator")) {
          if (d === null) continue
          const fn = functionDeclarator(d)
          if (fn !== undefined) rest.push(functionDraft(m, d, fn, "method", m))
          else if (declaredName(d) !== "") fields.push(draft("field", declaredName(d), m))
        }
        break
      }
      case "function_definition": {
        const d = m.childForFieldName("declarator")
        const fn = functionDeclarator(d)
        if (d !== null && fn !== undefined) rest.push(functionDraft(m, d, fn, "method", m))
        break
      }
      case "template_declaration":
        rest.push(...members(named(m).filter((c) => c.type !== "template_parameter_list")))
        break
      case "preproc_if":
      case "preproc_ifdef":
      case "preproc_else":
      case "preproc_elif":
        rest.push(...members(named(m)))
        break
      default:
        break
    }
  }
  return [...fields, ...rest]
}

interface State {
  readonly imports: Array<ImportInfo>
  /** `Owner::method` definitions; `scope` is the list they stay in when Owner is not declared here. */
  readonly outOfClass: Array<{ readonly owner: string; readonly method: Draft; readonly scope: Array<Draft> }>
}

const topLevel = (nodes: ReadonlyArray<TSNode>, state: State): Array<Draft> => {
  const out: Array<Draft> = []
  for (const node of nodes) {
    switch (node.type) {
      case "preproc_include": {
        const path = node.childForFieldName("path")
        if (path === null) break
        const system = path.type === "system_lib_string"
        state.imports.push({ module: path.text.replace(/^["<]|[">]$/g, ""), names: [], line: node.startPosition.row + 1, form: system ? "system-include" : "import" })
        break
      }
      case "preproc_if":
      case "preproc_ifdef":
      case "preproc_else":
      case "preproc_elif":
      case "preproc_elifdef":
        out.push(...topLevel(named(node), state))
        break
      case "linkage_specification": {
        const body = node.childForFieldName("body")
        if (body !== null) out.push(...topLevel(body.type === "declaration_list" ? named(body) : [body], state))
        break
      }
      case "namespace_definition": {
        const body = node.childForFieldName("body")
        const name = fieldText(node, "name")
        const children = body === null ? [] : topLevel(named(body), state)
        out.push(draft("namespace", name === "" ? "(anonymous)" : name, node, { children }))
        break
      }
      case "template_declaration":
        out.push(...topLevel(named(node).filter((c) => c.type !== "template_parameter_list"), state))
        break
      case "class_specifier":
      case "struct_specifier":
      case "union_specifier":
        if (node.childForFieldName("body") !== null) out.push(recordDraft(node, fieldText(node, "name"), node))
        break
      case "enum_specifier":
        if (node.childForFieldName("body") !== null) out.push(draft("enum", fieldText(node, "name"), node))
        break
      case "type_definition": {
        const type = node.childForFieldName("type")
        const alias = declaredName(node.childForFieldName("declarator"))
        if (type !== null && type.childForFieldName("body") !== null && (RECORDS[type.type] !== undefined || type.type === "enum_specifier")) {
          const name = fieldText(type, "name") || alias
          out.push(type.type === "enum_specifier" ? draft("enum", name, node) : recordDraft(type, name, node))
          if (alias !== "" && alias !== name) out.push(draft("type", alias, node))
        } else if (alias !== "") {
          out.push(draft("type", alias, node))
        }
        break
      }
      case "function_definition":
      case "declaration": {
        const type = node.childForFieldName("type")
        if (type !== null && type.childForFieldName("body") !== null) {
          // `struct S { … } s;` declares the struct too.
          if (RECORDS[type.type] !== undefined) out.push(recordDraft(type, fieldText(type, "name"), node))
          else if (type.type === "enum_specifier") out.push(draft("enum", fieldText(type, "name"), node))
        }
        const declarators = node.type === "function_definition" ? [node.childForFieldName("declarator")] : node.childrenForFieldName("declarator")
        for (const d of declarators) {
          if (d === null) continue
          const fn = functionDeclarator(d)
          if (fn === undefined) {
            const name = declaredName(d)
            if (name !== "" && node.type === "declaration") out.push(draft("variable", name, node))
            continue
          }
          const f = functionDraft(node, d, fn, "function", node)
          const scope = f.name.lastIndexOf("::")
          if (scope > 0) {
            const owner = f.name.slice(0, scope)
            state.outOfClass.push({ owner, method: { ...f, kind: "method", name: f.name.slice(scope + 2) }, scope: out })
          } else {
            out.push(f)
          }
        }
        break
      }
      default:
        break
    }
  }
  return out
}

const findOwner = (symbols: ReadonlyArray<Draft>, path: ReadonlyArray<string>): Draft | undefined => {
  let scope: ReadonlyArray<Draft> = symbols
  let found: Draft | undefined
  for (const part of path) {
    found = scope.find((s) => s.name === part && s.kind !== "function" && s.kind !== "method" && s.kind !== "variable")
    if (found === undefined) return undefined
    scope = found.children
  }
  return found
}

/** Extract includes and symbols from a C or C++ tree. */
export const extractC = (root: TSNode): Extraction => {
  const state: State = { imports: [], outOfClass: [] }
  const symbols = topLevel(named(root), state)
  for (const { owner, method, scope } of state.outOfClass) {
    const path = owner.replace(/<[^>]*>/g, "").split("::")
    // `Shape::area` written inside `namespace geo` is found under geo or at top level.
    const target = findOwner(symbols, path) ?? symbols.filter((s) => s.kind === "namespace").map((ns) => findOwner(ns.children, path)).find((x) => x !== undefined)
    if (target !== undefined) target.children.push(method)
    else scope.push({ ...method, name: `${owner}::${method.name}` })
  }
  const bySource = (list: Array<Draft>): void => {
    list.sort((a, b) => a.start - b.start)
    for (const d of list) if (d.kind === "namespace") bySource(d.children)
  }
  bySource(symbols)
  return { imports: state.imports, symbols }
}

export const C_CALLS = `
(call_expression function: (_) @callee)
(new_expression type: (_) @callee)
`

export const readCCallee: CalleeReader = (node) => {
  switch (node.type) {
    case "identifier":
    case "type_identifier":
      return { name: node.text, qualifier: "" }
    case "qualified_identifier":
      return splitCallee(node.text.replace(/\s+/g, ""), "::")
    case "field_expression":
      return memberCallee(node, "field", "argument")
    case "template_function":
    case "template_type": {
      const name = node.childForFieldName("name")
      return name === null ? undefined : readCCallee(name, "callee")
    }
    default:
      return undefined
  }
}
