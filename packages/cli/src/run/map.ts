/**
 * The work of `strata map` and `strata tree`, loaded only when one of them runs (the
 * packages behind it take a while to import; `strata --help` should not wait for them).
 */
import { Effect } from "effect"
import { FILE_TREE_HEADER, REPO_MAP_HEADER, Tokenizer } from "@strata/core/effect"
import { jsonDocument, Output } from "../output.ts"
import { prepare } from "./shared.ts"

export const runMap = (budget: number | undefined) =>
  Effect.gen(function* () {
    const { ctx, engine } = yield* prepare(budget === undefined ? {} : { mapTokens: budget }, { dryRun: false })
    const output = yield* Output
    const result = yield* Effect.gen(function* () {
      const symbols = yield* engine.symbolMap
      const tokenizer = yield* Tokenizer
      const limit = ctx.config.budgets.mapTokens
      if (limit === null) {
        const text = symbols.render()
        return { text, files: symbols.symbolFiles, omitted: 0, tokens: tokenizer.count(text), symbols }
      }
      const cut = symbols.budgeted({ budgetTokens: limit, countTokens: (t) => tokenizer.count(t) })
      return { text: cut.text, files: cut.files, omitted: cut.omitted, tokens: cut.tokens, symbols }
    }).pipe(Effect.provide(engine.layer))
    const { symbols } = result
    if (ctx.json) {
      yield* output.out(
        jsonDocument(
          {
            legend: symbols.legend,
            files: result.files.map((path) => ({ path, references: symbols.refCounts.get(path) ?? 0, block: symbols.block(path) ?? "" })),
            omitted: result.omitted,
            tokens: result.tokens,
            model: ctx.config.model,
            problems: symbols.problems
          },
          2
        )
      )
      return
    }
    yield* output.out(REPO_MAP_HEADER + result.text.replace(/\n+$/, ""))
    const s = output.errStyle
    const cut = result.omitted > 0 ? `; ${result.omitted} less referenced files left out by the ${ctx.config.budgets.mapTokens}-token budget` : ""
    yield* output.err(s.dim(`${result.files.length} files, ${result.tokens.toLocaleString("en-US")} tokens (${ctx.config.model})${cut}`))
    for (const p of symbols.problems) yield* output.err(s.yellow(`skipped ${p.path}: ${p.reason}`))
  })

export const runTree = Effect.gen(function* () {
  const { ctx, engine } = yield* prepare({}, { dryRun: false })
  const output = yield* Output
  const symbols = yield* engine.symbolMap.pipe(Effect.provide(engine.layer))
  if (ctx.json) {
    yield* output.out(jsonDocument({ files: symbols.files, hash: symbols.fileTreeHash }, 2))
    return
  }
  yield* output.out(FILE_TREE_HEADER + symbols.fileTree.replace(/\n+$/, ""))
  yield* output.err(output.errStyle.dim(`${symbols.files.length} files`))
})
