// Doctest-style checks for JSDoc examples: a line `expression // value`, whose comment is a
// literal (number, string, boolean, null, undefined, or an array or object of those), is
// a claim about the expression's value. `withValueChecks` rewrites such lines so that
// running the example checks each claim.
import ts from "typescript"

/** Is `node` a literal value: a number, string, boolean, null, undefined, or an array or object of those? */
const isLiteral = (node: ts.Node): boolean => {
  if (ts.isParenthesizedExpression(node)) return isLiteral(node.expression)
  if (ts.isNumericLiteral(node) || ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return true
  if (node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword || node.kind === ts.SyntaxKind.NullKeyword) return true
  if (ts.isIdentifier(node)) return node.text === "undefined" || node.text === "Infinity" || node.text === "NaN"
  if (ts.isPrefixUnaryExpression(node)) return node.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(node.operand)
  if (ts.isArrayLiteralExpression(node)) return node.elements.every(isLiteral)
  if (ts.isObjectLiteralExpression(node)) {
    return node.properties.every((p) => ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && isLiteral(p.initializer))
  }
  return false
}

/** The literal a comment's text states, as source text, or undefined when it states none. Pure. */
export const literalOf = (comment: string): string | undefined => {
  const text = comment.trim()
  // An elided value (`"tool result … answers no tool call ..."`) is a sketch, not a claim.
  if (text === "" || text.includes("...") || text.includes("…")) return undefined
  const out = ts.transpileModule(`(${text})\n`, { reportDiagnostics: true, compilerOptions: { target: ts.ScriptTarget.ES2022 } })
  if ((out.diagnostics ?? []).length > 0) return undefined
  const file = ts.createSourceFile("value.ts", `(${text})\n`, ts.ScriptTarget.Latest)
  const [statement, ...rest] = file.statements
  return rest.length === 0 && statement !== undefined && ts.isExpressionStatement(statement) && isLiteral(statement.expression) ? text : undefined
}

/**
 * The text of the `//` comment that states a statement's value: the one on the same line
 * after it, or else the run of `//` lines right below it (a value too long for one line).
 */
const claimAfter = (code: string, source: ts.SourceFile, end: number): string => {
  const single = (c: ts.CommentRange) => c.kind === ts.SyntaxKind.SingleLineCommentTrivia
  const sameLine = (ts.getTrailingCommentRanges(code, end) ?? []).find(single)
  if (sameLine !== undefined) return code.slice(sameLine.pos + 2, sameLine.end)
  // Leading comments are those after the line break: the lines below the statement.
  const comments = (ts.getLeadingCommentRanges(code, end) ?? []).filter(single)
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line
  const run: Array<string> = []
  for (const c of comments) {
    if (lineOf(c.pos) !== lineOf(end) + 1 + run.length) break
    run.push(code.slice(c.pos + 2, c.end))
  }
  return run.join(" ")
}

/**
 * The example with each top-level `expression // literal` statement (the literal on the
 * same line, or on the `//` lines right below) replaced by
 * `check(expression, literal, "where")`, where `check` is the name of a function in scope
 * when it runs, and `where` is `file:line` in the original file (`firstLine` is the file
 * line of the code's first line). Other statements are kept as they are. Pure.
 */
export const withValueChecks = (code: string, check: string, file: string, firstLine: number): string => {
  const source = ts.createSourceFile("example.ts", code, ts.ScriptTarget.Latest, true)
  const edits: Array<{ readonly start: number; readonly end: number; readonly text: string }> = []
  for (const statement of source.statements) {
    if (!ts.isExpressionStatement(statement)) continue
    const end = statement.getEnd()
    const value = literalOf(claimAfter(code, source, end))
    if (value === undefined) continue
    const line = firstLine + source.getLineAndCharacterOfPosition(statement.getStart()).line
    const expression = statement.expression.getText(source)
    edits.push({ start: statement.getStart(), end, text: `${check}(${expression}, (${value}), ${JSON.stringify(`${file}:${line}`)});` })
  }
  let out = code
  for (const edit of edits.reverse()) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end)
  return out
}
