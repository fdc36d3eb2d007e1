/**
 * TypeScript, TSX and JavaScript/JSX extraction: ES imports, re-exports and
 * `require`, classes, interfaces, enums, type aliases, namespaces, functions
 * (including `const f = () => {}` and CommonJS `exports.f = function`), methods,
 * getters, fields and top-level variables.
 */
import type { ImportInfo, ImportName, Param } from "../../syntax/model.ts"
import type { TSNode } from "../../syntax/parser.ts"
import { normalizeType } from "../../syntax/typeText.ts"
import { type Draft, type Extraction, type CalleeReader, draft, dottedName, fieldText, hasToken, named, normalizeBase, splitCallee, tokens } from "./common.ts"

const FUNCTION_VALUES = new Set(["arrow_function", "function_expression", "function", "generator_function"])
const CLASS_VALUES = new Set(["class", "class_expression"])

const stringValue = (node: TSNode | null): string => {
  if (node === null) return ""
  const fragment = named(node).find((c) => c.type === "string_fragment")
  return fragment?.text ?? ""
}

const typeOf = (annotation: TSNode | null): string => {
  if (annotation === null) return ""
  // Annotations (plain, predicate `x is T`, `asserts x`) start with ":".
  return normalizeType(annotation.text.replace(/^:\s*/, ""))
}

const patternName = (node: TSNode): string => {
  switch (node.type) {
    case "identifier":
    case "shorthand_property_identifier_pattern":
    case "this":
      return node.text
    case "rest_pattern": {
      const inner = named(node)[0]
      return `...${inner === undefined ? "" : patternName(inner)}`
    }
    case "assignment_pattern": {
      const left = node.childForFieldName("left")
      return left === null ? "" : patternName(left)
    }
    default:
      return normalizeType(node.text, 24)
  }
}

/** Parameters of a `formal_parameters` node (TS and JS shapes). */
export const tsParams = (list: TSNode | null): Array<Param> => {
  if (list === null) return []
  const out: Array<Param> = []
  for (const p of named(list)) {
    switch (p.type) {
      case "required_parameter":
      case "optional_parameter": {
        const pattern = p.childForFieldName("pattern")
        if (pattern === null) continue
        const name = patternName(pattern)
        if (name === "this") continue
        out.push({ name, optional: p.type === "optional_parameter" || p.childForFieldName("value") !== null })
        break
      }
      case "assignment_pattern":
        out.push({ name: patternName(p), optional: true })
        break
      case "comment":
      case "decorator":
        break
      default:
        out.push({ name: patternName(p), optional: false })
    }
  }
  return out
}

const isAsync = (node: TSNode): boolean => hasToken(node, "async")

const functionDraft = (node: TSNode, name: string, kind: "function" | "method", at: TSNode = node, async: boolean = isAsync(node)): Draft =>
  draft(kind, name, at, {
    async,
    params: tsParams(node.childForFieldName("parameters")),
    returns: typeOf(node.childForFieldName("return_type"))
  })

const heritage = (node: TSNode): Array<string> => {
  const bases: Array<string> = []
  for (const child of named(node)) {
    if (child.type === "class_heritage") {
      for (const clause of named(child)) {
        if (clause.type === "extends_clause") {
          // `extends Base<T>`: the value and its type arguments are sibling nodes.
          for (const t of named(clause)) {
            if (t.type === "type_arguments" && bases.length > 0) bases[bases.length - 1] = normalizeBase(bases[bases.length - 1]! + t.text)
            else if (t.type !== "comment") bases.push(normalizeBase(t.text))
          }
        } else if (clause.type === "implements_clause") {
          for (const t of named(clause)) if (t.type !== "comment") bases.push(normalizeBase(t.text))
        } else if (clause.type !== "comment") {
          // JavaScript: `class A extends B` puts the expression straight under class_heritage.
          bases.push(normalizeBase(clause.text))
        }
      }
    } else if (child.type === "extends_type_clause") {
      for (const t of named(child)) bases.push(normalizeBase(t.text))
    }
  }
  return bases
}

const memberName = (node: TSNode | null): string => (node === null ? "" : node.text)

/** `#name` members are private to the class (ECMAScript private), so no other file can use them: left out of the map. */
const isPrivateName = (name: string): boolean => name.startsWith("#")

/** `this.x = …` assignments in a constructor body: fields JavaScript never declares. */
const constructorFields = (body: TSNode | null, into: Array<Draft>, known: Set<string>): void => {
  if (body === null) return
  for (const statement of named(body)) {
    if (statement.type !== "expression_statement") continue
    const expr = named(statement)[0]
    if (expr === undefined || expr.type !== "assignment_expression") continue
    const left = expr.childForFieldName("left")
    if (left === null || left.type !== "member_expression") continue
    if (left.childForFieldName("object")?.type !== "this") continue
    const name = memberName(left.childForFieldName("property"))
    if (name === "" || isPrivateName(name) || known.has(name)) continue
    known.add(name)
    into.push(draft("field", name, statement))
  }
}

const classMembers = (body: TSNode | null): Array<Draft> => {
  if (body === null) return []
  const fields: Array<Draft> = []
  const methods: Array<Draft> = []
  const known = new Set<string>()
  for (const m of named(body)) {
    switch (m.type) {
      case "method_definition":
      case "method_signature":
      case "abstract_method_signature": {
        const name = memberName(m.childForFieldName("name"))
        if (isPrivateName(name)) break
        const flags = tokens(m)
        if (flags.has("get") || flags.has("set")) {
          methods.push(draft("property", name, m, { returns: flags.has("get") ? typeOf(m.childForFieldName("return_type")) : "" }))
        } else {
          methods.push(functionDraft(m, name, "method", m, flags.has("async")))
          if (name === "constructor") constructorFields(m.childForFieldName("body"), fields, known)
        }
        break
      }
      case "public_field_definition":
      case "field_definition":
      case "property_signature": {
        const name = memberName(m.childForFieldName("name") ?? m.childForFieldName("property"))
        if (isPrivateName(name)) break
        const value = m.childForFieldName("value")
        if (value !== null && FUNCTION_VALUES.has(value.type)) {
          methods.push(functionDraft(value, name, "method", m))
        } else {
          const optional = hasToken(m, "?")
          known.add(name)
          fields.push(draft("field", optional ? `${name}?` : name, m))
        }
        break
      }
      default:
        break
    }
  }
  return [...fields, ...methods]
}

const interfaceMembers = (body: TSNode | null): Array<Draft> => classMembers(body)

const classDraft = (node: TSNode, name: string, kind: "class" | "interface", at: TSNode = node): Draft =>
  draft(kind, name, at, {
    bases: heritage(node),
    children: kind === "class" ? classMembers(node.childForFieldName("body")) : interfaceMembers(node.childForFieldName("body"))
  })

const importNames = (clause: TSNode): Array<ImportName> => {
  const out: Array<ImportName> = []
  for (const c of named(clause)) {
    if (c.type === "identifier") out.push({ name: "default", alias: c.text })
    else if (c.type === "namespace_import") {
      const id = named(c)[0]
      out.push({ name: "*", alias: id?.text ?? "*" })
    } else if (c.type === "named_imports") {
      for (const spec of named(c)) {
        if (spec.type !== "import_specifier") continue
        const name = fieldText(spec, "name")
        const alias = fieldText(spec, "alias")
        out.push({ name, alias: alias === "" ? name : alias })
      }
    }
  }
  return out
}

const requireCall = (value: TSNode | null): string | undefined => {
  if (value === null || value.type !== "call_expression") return undefined
  const fn = value.childForFieldName("function")
  if (fn === null || fn.type !== "identifier" || fn.text !== "require") return undefined
  const arg = named(value.childForFieldName("arguments") ?? value)[0]
  return arg !== undefined && arg.type === "string" ? stringValue(arg) : undefined
}

interface Sink {
  readonly imports: Array<ImportInfo>
  /** An ES module: its unexported top-level variables are private state, left out of the map. */
  readonly module: boolean
}

/** Drafts for a `lexical_declaration` / `variable_declaration`; `require` calls become imports. */
const declarators = (decl: TSNode, sink: Sink, at: TSNode, privateState: boolean): Array<Draft> => {
  const out: Array<Draft> = []
  for (const d of named(decl)) {
    if (d.type !== "variable_declarator") continue
    const nameNode = d.childForFieldName("name")
    const value = d.childForFieldName("value")
    if (nameNode === null) continue
    const required = requireCall(value)
    if (required !== undefined) {
      const names: Array<ImportName> =
        nameNode.type === "identifier"
          ? [{ name: "*", alias: nameNode.text }]
          : named(nameNode)
              .filter((n) => n.type === "shorthand_property_identifier_pattern")
              .map((n) => ({ name: n.text, alias: n.text }))
      sink.imports.push({ module: required, names, line: d.startPosition.row + 1, form: "import" })
      continue
    }
    if (nameNode.type === "identifier") {
      const name = nameNode.text
      if (value !== null && FUNCTION_VALUES.has(value.type)) out.push(functionDraft(value, name, "function", d === named(decl)[0] ? at : d))
      else if (value !== null && CLASS_VALUES.has(value.type)) out.push(classDraft(value, name, "class", d === named(decl)[0] ? at : d))
      else if (!privateState) out.push(draft("variable", name, d === named(decl)[0] ? at : d))
    } else if (!privateState) {
      for (const n of named(nameNode)) {
        const name =
          n.type === "shorthand_property_identifier_pattern" || n.type === "identifier"
            ? n.text
            : n.type === "pair_pattern"
              ? fieldText(n, "value")
              : ""
        if (/^[\w$]+$/.test(name)) out.push(draft("variable", name, n))
      }
    }
  }
  return out
}

/** `exports.f = function`, `module.exports.f = …`, `A.prototype.m = function`. */
const assignmentDraft = (expr: TSNode, at: TSNode): Draft | undefined => {
  const left = expr.childForFieldName("left")
  const right = expr.childForFieldName("right")
  if (left === null || right === null || left.type !== "member_expression") return undefined
  const target = dottedName(left, ["member_expression"], "object", "property")
  if (target === "") return undefined
  const parts = target.split(".")
  const name = parts[parts.length - 1]!
  const method = parts.includes("prototype")
  if (FUNCTION_VALUES.has(right.type)) return functionDraft(right, name, method ? "method" : "function", at)
  if (CLASS_VALUES.has(right.type)) return classDraft(right, name, "class", at)
  return undefined
}

const statements = (nodes: ReadonlyArray<TSNode>, sink: Sink, topLevel: boolean): Array<Draft> => {
  const out: Array<Draft> = []
  for (const node of nodes) out.push(...statement(node, node, sink, topLevel))
  return out
}

const moduleName = (node: TSNode): string => {
  const name = node.childForFieldName("name")
  if (name === null) return ""
  return name.type === "string" ? JSON.stringify(stringValue(name)) : name.text
}

const statement = (node: TSNode, at: TSNode, sink: Sink, topLevel: boolean): Array<Draft> => {
  switch (node.type) {
    case "import_statement": {
      const source = stringValue(node.childForFieldName("source"))
      const clause = named(node).find((c) => c.type === "import_clause")
      sink.imports.push({ module: source, names: clause === undefined ? [] : importNames(clause), line: node.startPosition.row + 1, form: "import" })
      return []
    }
    case "export_statement": {
      const source = node.childForFieldName("source")
      if (source !== null) {
        const clause = named(node).find((c) => c.type === "export_clause")
        const names: Array<ImportName> =
          clause === undefined
            ? [{ name: "*", alias: "*" }]
            : named(clause)
                .filter((s) => s.type === "export_specifier")
                .map((s) => ({ name: fieldText(s, "name"), alias: fieldText(s, "alias") || fieldText(s, "name") }))
        sink.imports.push({ module: stringValue(source), names, line: node.startPosition.row + 1, form: "import" })
        return []
      }
      const declaration = node.childForFieldName("declaration")
      if (declaration !== null) return statement(declaration, at, sink, topLevel)
      const value = node.childForFieldName("value")
      if (value !== null && FUNCTION_VALUES.has(value.type)) return [functionDraft(value, fieldText(value, "name") || "default", "function", at)]
      if (value !== null && CLASS_VALUES.has(value.type)) return [classDraft(value, fieldText(value, "name") || "default", "class", at)]
      // `export default class {}` parses as a nameless declaration in some grammars.
      const inner = named(node).find((c) => c.type === "class_declaration" || c.type === "function_declaration")
      return inner === undefined ? [] : statement(inner, at, sink, topLevel)
    }
    case "class_declaration":
    case "abstract_class_declaration":
    case "class":
      return [classDraft(node, fieldText(node, "name") || "default", "class", at)]
    case "interface_declaration":
      return [classDraft(node, fieldText(node, "name"), "interface", at)]
    case "enum_declaration":
      return [draft("enum", fieldText(node, "name"), at)]
    case "type_alias_declaration":
      return [draft("type", fieldText(node, "name"), at)]
    case "function_declaration":
    case "generator_function_declaration":
    case "function_signature":
    case "function_expression":
      return [functionDraft(node, fieldText(node, "name") || "default", "function", at)]
    case "lexical_declaration":
    case "variable_declaration":
      // `at` is the export statement when the declaration is exported.
      return declarators(node, sink, at, sink.module && topLevel && at.type !== "export_statement")
    case "ambient_declaration": {
      const out: Array<Draft> = []
      for (const c of named(node)) out.push(...statement(c, c === named(node)[0] ? at : c, sink, topLevel))
      return out
    }
    case "module":
    case "internal_module": {
      const body = node.childForFieldName("body")
      return [draft("namespace", moduleName(node), at, { children: body === null ? [] : statements(named(body), sink, false) })]
    }
    case "ERROR":
      // Declarations tree-sitter completed inside an error region still count.
      return topLevel ? statements(named(node), sink, true) : []
    case "expression_statement": {
      const expr = named(node)[0]
      if (expr === undefined) return []
      if (expr.type === "internal_module" || expr.type === "module") return statement(expr, at, sink, topLevel)
      if (expr.type === "assignment_expression" && topLevel) {
        const d = assignmentDraft(expr, at)
        return d === undefined ? [] : [d]
      }
      if (expr.type === "call_expression") {
        const required = requireCall(expr)
        if (required !== undefined) sink.imports.push({ module: required, names: [], line: node.startPosition.row + 1, form: "import" })
      }
      return []
    }
    default:
      return []
  }
}

/** Extract imports and symbols from a TypeScript/TSX/JavaScript tree. */
export const extractTypeScript = (root: TSNode): Extraction => {
  const top = named(root)
  const sink: Sink = { imports: [], module: top.some((n) => n.type === "import_statement" || n.type === "export_statement") }
  const symbols = statements(top, sink, true)
  return { imports: sink.imports, symbols }
}

/** Calls, `new` expressions and JSX component uses. */
export const TS_CALLS = `
(call_expression function: (_) @callee)
(new_expression constructor: (_) @callee)
`
export const TSX_CALLS = `${TS_CALLS}
(jsx_opening_element name: (_) @jsx)
(jsx_self_closing_element name: (_) @jsx)
`

const MEMBER = ["member_expression"]

/** Reads `f`, `a.b.f`, `new A()`, `<Comp />`; skips `super`, `import()` and computed callees. */
export const readTsCallee: CalleeReader = (node, capture) => {
  switch (node.type) {
    case "identifier": {
      const text = node.text
      // Lower-case JSX names are intrinsic elements (`<div>`), not components.
      if (capture === "jsx" && /^[a-z]/.test(text)) return undefined
      // `require("x")` is an import, already recorded as one.
      if (text === "require" && capture === "callee") return undefined
      return { name: text, qualifier: "" }
    }
    case "member_expression": {
      const property = node.childForFieldName("property")
      if (property === null) return undefined
      return { name: property.text, qualifier: dottedName(node.childForFieldName("object"), MEMBER, "object", "property") }
    }
    case "nested_identifier":
    case "member_expression_jsx":
      return splitCallee(node.text, ".")
    default:
      return undefined
  }
}
