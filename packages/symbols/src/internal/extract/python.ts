/**
 * Python extraction: `import` / `from … import` (with relative levels), classes with
 * bases, methods (the first parameter dropped unless `@staticmethod`),
 * `@property`, instance variables assigned in `__init__`, class attributes,
 * functions (async marked) and public top-level variables.
 */
import type { ImportName, Param } from "../../syntax/model.ts"
import type { TSNode } from "../../syntax/parser.ts"
import { normalizeType } from "../../syntax/typeText.ts"
import { type CalleeReader, type Draft, type Extraction, draft, dottedName, fieldText, hasToken, named, normalizeBase } from "./common.ts"

const paramOf = (p: TSNode): Param | undefined => {
  switch (p.type) {
    case "identifier":
      return { name: p.text, optional: false }
    case "typed_parameter": {
      const inner = named(p)[0]
      return inner === undefined ? undefined : paramOf(inner)
    }
    case "default_parameter":
    case "typed_default_parameter":
      return { name: fieldText(p, "name"), optional: true }
    case "list_splat_pattern": {
      const inner = named(p)[0]
      return { name: `*${inner?.text ?? ""}`, optional: false }
    }
    case "dictionary_splat_pattern": {
      const inner = named(p)[0]
      return { name: `**${inner?.text ?? ""}`, optional: false }
    }
    default:
      // `/` and bare `*` separators carry no name.
      return undefined
  }
}

const pyParams = (list: TSNode | null): Array<Param> => {
  if (list === null) return []
  const out: Array<Param> = []
  for (const p of named(list)) {
    const param = paramOf(p)
    if (param !== undefined && param.name !== "" && param.name !== "*") out.push(param)
  }
  return out
}

const decoratorNames = (decorated: TSNode | null): Array<string> =>
  decorated === null || decorated.type !== "decorated_definition"
    ? []
    : named(decorated)
        .filter((c) => c.type === "decorator")
        .map((c) => c.text.replace(/^@\s*/, "").replace(/\(.*$/s, ""))

const returnType = (fn: TSNode): string => {
  const t = fn.childForFieldName("return_type")
  return t === null ? "" : normalizeType(t.text.replace(/^["']|["']$/g, ""))
}

/** `self.x = …` (and annotated) assignments directly in `__init__`'s body, first-seen order. */
const instanceVars = (fn: TSNode, selfName: string, into: Array<Draft>, known: Set<string>): void => {
  const body = fn.childForFieldName("body")
  if (body === null) return
  const visit = (node: TSNode): void => {
    for (const statement of named(node)) {
      if (statement.type === "expression_statement") {
        const expr = named(statement)[0]
        if (expr === undefined || expr.type !== "assignment") continue
        const left = expr.childForFieldName("left")
        if (left === null || left.type !== "attribute") continue
        if (left.childForFieldName("object")?.text !== selfName) continue
        const name = fieldText(left, "attribute")
        if (name === "" || known.has(name)) continue
        known.add(name)
        into.push(draft("field", name, statement))
      } else if (statement.type === "if_statement" || statement.type === "try_statement" || statement.type === "with_statement") {
        // Assignments nested one level in a guard still define the attribute.
        for (const block of named(statement)) if (block.type === "block") visit(block)
      }
    }
  }
  visit(body)
}

const functionDraft = (fn: TSNode, at: TSNode, inClass: boolean, decorators: ReadonlyArray<string>): Draft => {
  const name = fieldText(fn, "name")
  const all = pyParams(fn.childForFieldName("parameters"))
  const isStatic = decorators.includes("staticmethod")
  const params = inClass && !isStatic ? all.slice(1) : all
  if (inClass && (decorators.includes("property") || decorators.some((d) => d.endsWith(".setter") || d.endsWith(".getter")))) {
    return draft("property", name, at, { returns: returnType(fn) })
  }
  return draft(inClass ? "method" : "function", name, at, {
    async: hasToken(fn, "async"),
    params,
    returns: returnType(fn)
  })
}

const classDraft = (cls: TSNode, at: TSNode): Draft => {
  const bases: Array<string> = []
  const superclasses = cls.childForFieldName("superclasses")
  if (superclasses !== null) {
    for (const b of named(superclasses)) if (b.type !== "keyword_argument" && b.type !== "comment") bases.push(normalizeBase(b.text))
  }
  const fields: Array<Draft> = []
  const methods: Array<Draft> = []
  const known = new Set<string>()
  const body = cls.childForFieldName("body")
  // Methods defined under `if sys.platform == ...:` or `try:` in the class body count too.
  const flatten = (nodes: ReadonlyArray<TSNode>): Array<TSNode> =>
    nodes.flatMap((n) =>
      GUARDS.has(n.type) ? flatten(named(n).flatMap((part) => (part.type === "block" ? named(part) : part.type.endsWith("_clause") ? [part] : []))) : [n]
    )
  for (const statement of body === null ? [] : flatten(named(body))) {
    const decorated = statement.type === "decorated_definition" ? statement : null
    const def = decorated === null ? statement : decorated.childForFieldName("definition")
    if (def === null) continue
    if (def.type === "function_definition") {
      const fn = functionDraft(def, statement, true, decoratorNames(decorated))
      methods.push(fn)
      if (fn.name === "__init__") {
        const first = named(def.childForFieldName("parameters") ?? def)[0]
        instanceVars(def, first?.text ?? "self", fields, known)
      }
    } else if (def.type === "class_definition") {
      methods.push(classDraft(def, statement))
    } else if (def.type === "expression_statement") {
      const expr = named(def)[0]
      if (expr?.type === "assignment") {
        const left = expr.childForFieldName("left")
        if (left?.type === "identifier" && !known.has(left.text)) {
          known.add(left.text)
          fields.push(draft("field", left.text, statement))
        }
      }
    }
  }
  return draft("class", fieldText(cls, "name"), at, { bases, children: [...fields, ...methods] })
}

const GUARDS = new Set(["if_statement", "try_statement", "with_statement", "else_clause", "elif_clause", "except_clause", "finally_clause"])

const importedName = (node: TSNode): ImportName | undefined => {
  if (node.type === "dotted_name") return { name: node.text, alias: node.text }
  if (node.type === "aliased_import") {
    const name = fieldText(node, "name")
    return { name, alias: fieldText(node, "alias") || name }
  }
  return undefined
}

const isPublicVariable = (name: string): boolean => !name.startsWith("_") || (name.startsWith("__") && name.endsWith("__"))

/** Extract imports and symbols from a Python tree. */
export const extractPython = (root: TSNode): Extraction => {
  const imports: Extraction["imports"] = []
  const symbols: Array<Draft> = []
  const known = new Set<string>()
  const walk = (statements: ReadonlyArray<TSNode>): void => {
    for (const statement of statements) {
      const line = statement.startPosition.row + 1
      switch (statement.type) {
        case "if_statement":
        case "try_statement":
        case "with_statement":
        case "else_clause":
        case "elif_clause":
        case "except_clause":
        case "finally_clause":
          // Module-level guards (`if TYPE_CHECKING:`, `try: import x`) still define module names.
          for (const part of named(statement)) {
            if (part.type === "block") walk(named(part))
            else if (part.type.endsWith("_clause")) walk([part])
          }
          break
        case "import_statement":
          for (const n of named(statement)) {
            const name = importedName(n)
            // `import a.b` binds `a.b` as a qualifier; the module is the whole dotted name.
            if (name !== undefined) imports.push({ module: name.name, names: [{ name: "*", alias: name.alias }], line, form: "import" })
          }
          break
        case "import_from_statement": {
          const moduleNode = statement.childForFieldName("module_name")
          const module = moduleNode === null ? "" : moduleNode.text.replace(/\s+/g, "")
          const names: Array<ImportName> = []
          for (const n of statement.childrenForFieldName("name")) {
            if (n === null) continue
            const name = importedName(n)
            if (name !== undefined) names.push(name)
          }
          if (named(statement).some((c) => c.type === "wildcard_import")) names.push({ name: "*", alias: "*" })
          imports.push({ module, names, line, form: "import" })
          break
        }
        case "function_definition":
        case "class_definition":
        case "decorated_definition": {
          const def = statement.type === "decorated_definition" ? statement.childForFieldName("definition") : statement
          if (def?.type === "function_definition") symbols.push(functionDraft(def, statement, false, []))
          else if (def?.type === "class_definition") symbols.push(classDraft(def, statement))
          break
        }
        case "expression_statement": {
          const expr = named(statement)[0]
          if (expr?.type !== "assignment") break
          const left = expr.childForFieldName("left")
          const targets = left === null ? [] : left.type === "identifier" ? [left] : named(left).filter((n) => n.type === "identifier")
          for (const t of targets) {
            if (!isPublicVariable(t.text) || known.has(t.text)) continue
            known.add(t.text)
            symbols.push(draft("variable", t.text, statement))
          }
          break
        }
        default:
          break
      }
    }
  }
  walk(named(root))
  return { imports, symbols }
}

export const PYTHON_CALLS = "(call function: (_) @callee)"

const BUILTINS = new Set(["print", "len", "str", "int", "float", "bool", "list", "dict", "set", "tuple", "isinstance", "super", "range", "enumerate", "zip", "getattr", "setattr", "hasattr", "type", "repr", "sorted", "min", "max", "open"])

export const readPythonCallee: CalleeReader = (node) => {
  if (node.type === "identifier") return BUILTINS.has(node.text) ? undefined : { name: node.text, qualifier: "" }
  if (node.type === "attribute") {
    const name = fieldText(node, "attribute")
    return { name, qualifier: dottedName(node.childForFieldName("object"), ["attribute"], "object", "attribute") }
  }
  return undefined
}
