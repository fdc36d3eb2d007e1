/**
 * The work of `strata map` and `strata tree`, loaded only when one of them runs (the
 * packages behind it take a while to import; `strata --help` should not wait for them).
 */
import { Effect } from "effect"
import { cutMap, mapRanking, FILE_TREE_HEADER, REPO_MAP_HEADER, resolveRequestLimits, SECTION_SEPARATOR, Tokenizer } from "@strata/core/effect"
import { UsageError } from "../support/errors.ts"
import { jsonDocument, Output } from "../support/output.ts"
import { prepare } from "./shared.ts"

export const runMap = (budget: number | undefined) =>
  Effect.gen(function* () {
    const { ctx, engine } = yield* prepare({}, { dryRun: false, records: false })
    const output = yield* Output
    const result = yield* Effect.gen(function* () {
      const symbols = yield* engine.symbolMap
      const tokenizer = yield* Tokenizer
      if (budget !== undefined) {
        // A map of at most N tokens as printed: the header, the legend (its key and the aliases
        // the chosen blocks use) and the blocks. Below the header and the key there is no map.
        const header = tokenizer.count(REPO_MAP_HEADER)
        const cut = symbols.budgeted({ budgetTokens: budget - header, countTokens: (t) => tokenizer.count(t) })
        if (!cut.fits) {
          const smallest = header + cut.minimumTokens
          return yield* new UsageError({
            reason: `--budget ${budget} is below the smallest map, ${smallest.toLocaleString("en-US")} tokens (the header and the legend's abbreviation key)`,
            hint: `use --budget ${smallest} or more`
          })
        }
        return { text: cut.text, legend: cut.legend, files: cut.files, omitted: cut.omitted, tokens: header + cut.tokens, symbols, budget: { tokens: budget, from: "flag" as const }, treeLeftOut: false }
      }
      // The map the model sees: cut to the map budget exactly as a request's is.
      const { budgets } = ctx.config
      const limits = resolveRequestLimits(ctx.config.model, {
        ...(budgets.mapTokens === null ? {} : { mapTokens: budgets.mapTokens }),
        ...(budgets.maxInputTokens === null ? {} : { maxInputTokens: budgets.maxInputTokens })
      })
      const separator = tokenizer.count(SECTION_SEPARATOR)
      const blocks = new Map<string, number>()
      for (const path of symbols.symbolFiles) {
        const text = (symbols.block(path) ?? "").replace(/\n$/, "")
        if (text !== "") blocks.set(path, tokenizer.count(text) + separator)
      }
      const cut = cutMap({
        blocks,
        ranked: () => mapRanking(symbols),
        legendTokens: tokenizer.count(symbols.legend) + tokenizer.count(REPO_MAP_HEADER),
        treeTokens: symbols.fileTree === "" ? 0 : tokenizer.count(symbols.fileTree) + tokenizer.count(FILE_TREE_HEADER),
        budgetTokens: limits.mapTokens
      })
      const chosen = cut.files
      const files = chosen === undefined ? symbols.symbolFiles : symbols.symbolFiles.filter((p) => chosen.has(p))
      const text = chosen === undefined ? symbols.render() : symbols.render(new Set(symbols.symbolFiles.filter((p) => !chosen.has(p))))
      return {
        text,
        legend: symbols.legend,
        files,
        omitted: cut.leftOutFiles,
        tokens: tokenizer.count(text),
        symbols,
        budget: { tokens: limits.mapTokens, from: limits.mapBudget },
        treeLeftOut: cut.treeLeftOut
      }
    }).pipe(Effect.provide(engine.layer))
    const { symbols } = result
    if (ctx.json) {
      yield* output.out(
        jsonDocument(
          {
            legend: result.legend,
            files: result.files.map((path) => ({ path, references: symbols.refCounts.get(path) ?? 0, block: symbols.block(path) ?? "" })),
            omitted: result.omitted,
            tokens: result.tokens,
            budget: result.budget,
            treeLeftOut: result.treeLeftOut,
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
    const from = result.budget.from === "model" ? ` (derived from ${ctx.config.model}'s input limit)` : ""
    const cut = result.omitted > 0 ? `; ${result.omitted} less referenced files left out by the ${result.budget.tokens.toLocaleString("en-US")}-token map budget${from}` : ""
    const tree = result.treeLeftOut ? "; the file tree takes more than half the budget, so requests leave it out" : ""
    yield* output.err(s.dim(`${result.files.length} files, ${result.tokens.toLocaleString("en-US")} tokens (${ctx.config.model})${cut}${tree}`))
    // A file with parse errors is in the map (its reason says what it keeps); others are skipped.
    for (const p of symbols.problems) yield* output.err(s.yellow(`${p.reason.startsWith("parse errors") ? "partly parsed" : "skipped"} ${p.path}: ${p.reason}`))
  })

export const runTree = Effect.gen(function* () {
  const { ctx, engine } = yield* prepare({}, { dryRun: false, records: false })
  const output = yield* Output
  const symbols = yield* engine.symbolMap.pipe(Effect.provide(engine.layer))
  if (ctx.json) {
    yield* output.out(jsonDocument({ files: symbols.files, hash: symbols.fileTreeHash }, 2))
    return
  }
  yield* output.out(FILE_TREE_HEADER + symbols.fileTree.replace(/\n+$/, ""))
  yield* output.err(output.errStyle.dim(`${symbols.files.length} files`))
})
