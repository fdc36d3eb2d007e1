/**
 * The journal layout's planning (`journal.ts` shows the request it makes): for each
 * request, whether to rebuild the frozen tiers or append to the journal, from the memory
 * of the last committed request. `planJournal` is pure; the layout gives it the time.
 *
 * A rebuild happens on the first request, when the history is no longer an extension of
 * the journaled one (compaction), when the system prompt, the tools or the legend
 * change, when the
 * provider's cache has expired since the last request (`CacheExpiryMillis`), and when the
 * stale copies cost more to keep reading than a rebuild costs to write (rent or buy: the
 * read price x superseded tokens per request, summed, against the write price x the
 * tokens a rebuild rewrites; prices from `CachePrices`, the provider's). After a gap past the cache lifetime the breakpoints ask
 * for the 1 h cache (`AdaptiveTtl`). The model is told that update entries replace
 * earlier ones, as in a transcript. A changed symbol block is appended as a symbol diff
 * (unified diff hunks against the file's latest full entry) when that is shorter. A
 * selected file enters the journal once, when it enters the selection or changes
 * (`journaledFiles`).
 */
import { Context } from "effect"
import {
  ACK,
  FILE_TREE_CHANGES_HEADER,
  FILES_JOURNAL_HEADER,
  JOURNAL_NOTE,
  REPO_MAP_UPDATES_HEADER,
  SYMBOL_DIFF_NOTE,
  symbolDiffEntry
} from "../../assembly/headers.ts"
import { unifiedDiff } from "../../assembly/lineDiff.ts"
import {
  counted,
  historyPart,
  joinCounted,
  sectionOf,
  SECTION_SEPARATOR,
  toolsHash,
  userAckPart,
  conversationalParts,
  type Counted,
  type Part
} from "../../assembly/parts.ts"
import type { CacheTtl } from "../../domain/Block.ts"
import { ItemKeys, type ItemKey } from "../../domain/Item.ts"
import { TIERS } from "../../domain/Tier.ts"
import { sha256 } from "../../tokens/TokenCounter.ts"
import type { FileEntry, HistoryEntry, SymbolEntry } from "../base/entries.ts"
import { FROZEN_TIERS, type FrozenContent, type FrozenTier, type JournalMemory, type JournalPlan, type RebuildReason } from "../base/journalMemory.ts"
import type { AssemblyState } from "../base/state.ts"
import { DEFAULT_CACHE_PRICES, LONG_TTL_MILLIS, type CachePriceRatios } from "../base/providerCache.ts"

/**
 * Ask for the 1 hour cache after a gap longer than `CacheExpiryMillis` (default true).
 * A user who paused past the short lifetime once tends to again; a 1 h write costs 2x
 * base input on Anthropic against 1.25x, and pays off when the next gap is long too. The
 * breakpoints carry `ttl: "1h"` from then until the next full rebuild; providers without
 * a 1 h cache ignore it.
 */
export const AdaptiveTtl = Context.Reference<boolean>("@strata/core/pipeline/AdaptiveTtl", {
  defaultValue: () => true
})

const byPath = <A extends { readonly path: string }>(a: A, b: A): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

const sumTokens = (entries: ReadonlyArray<{ readonly tokens: number }>): number => entries.reduce((n, e) => n + e.tokens, 0)

const partsTokens = (parts: ReadonlyArray<Part>): number => parts.reduce((n, p) => n + p.tokens, 0)

/** History messages in conversation order (every tier's). */
const historyOf = (state: AssemblyState): ReadonlyArray<HistoryEntry> =>
  TIERS.flatMap((t) => state.historyTiers[t]).sort((a, b) => a.index - b.index)

const extendsHistory = (journaled: ReadonlyArray<string>, history: ReadonlyArray<HistoryEntry>): boolean =>
  journaled.length <= history.length && journaled.every((hash, i) => history[i]?.hash === hash)

/**
 * A changed symbol block as the journal writes it: whole, or as a symbol diff (its
 * changes against the file's latest full entry, `symbolDiffEntry`) when the model has
 * seen a full entry and the diff is shorter than the block.
 */
interface ChangedSymbol {
  readonly entry: SymbolEntry
  readonly shown: Counted
  /** The full entry a diff is against; undefined when the block is shown whole. */
  readonly base: Counted | undefined
}

/**
 * The update pair: changed symbol blocks, deleted files' paths, and file tree changes;
 * the journal's first one (`first`) opens with `JOURNAL_NOTE`, how to read them all, and
 * the first with a symbol diff (`noteDiffs`) with `SYMBOL_DIFF_NOTE`.
 */
const updatePart = (
  files: ReadonlyArray<FileEntry>,
  changed: ReadonlyArray<ChangedSymbol>,
  gone: ReadonlyArray<string>,
  dropped: ReadonlyArray<string>,
  added: ReadonlyArray<string>,
  removed: ReadonlyArray<string>,
  state: AssemblyState,
  first: boolean,
  noteDiffs: boolean
): Part | undefined => {
  const c = state.counter
  const symbolTexts: Array<Counted> = [
    ...changed.map((e) => e.shown),
    ...gone.map((path) => counted(`${path}: (deleted)`, c)),
    ...dropped.map((path) => counted(`${path}: (no symbol entry)`, c))
  ]
  const symbols = symbolTexts.length === 0 ? undefined : joinCounted([counted(REPO_MAP_UPDATES_HEADER, c), joinCounted(symbolTexts, SECTION_SEPARATOR, c)], "", c)
  const treeLines = [...added.map((f) => `+ ${f}`), ...removed.map((f) => `- ${f}`)]
  const tree = treeLines.length === 0 ? undefined : counted(FILE_TREE_CHANGES_HEADER + treeLines.join("\n"), c)
  const fileSection = files.length === 0 ? undefined : joinCounted([counted(FILES_JOURNAL_HEADER, c), joinCounted(files, SECTION_SEPARATOR, c)], "", c)
  const sections = joinCounted([symbols, tree, fileSection].filter((x): x is Counted => x !== undefined), SECTION_SEPARATOR, c)
  if (sections.text.length === 0) return undefined
  const notes = [...(first ? [JOURNAL_NOTE] : []), ...(noteDiffs ? [SYMBOL_DIFF_NOTE] : [])]
  const note = notes.length === 0 ? undefined : counted(notes.join(" "), c)
  const body = note === undefined ? sections : joinCounted([note, sections], SECTION_SEPARATOR, c)
  const items: Array<ItemKey> = [...changed.map((e) => e.entry.key), ...files.map((f) => f.key)]
  return userAckPart("updates", body, ACK, [
    ...(note === undefined ? [] : [{ type: "legend", tokens: note.tokens }]),
    ...(symbols === undefined ? [] : [{ type: "symbols", count: symbolTexts.length, tokens: symbols.tokens, files: [...changed.map((e) => e.entry.path), ...gone, ...dropped] }]),
    ...(tree === undefined ? [] : [{ type: "tree", tokens: tree.tokens, count: treeLines.length }]),
    ...(fileSection === undefined ? [] : [{ type: "files", count: files.length, tokens: fileSection.tokens, files: files.map((f) => f.path) }])
  ], [...items, ...(tree === undefined ? [] : [ItemKeys.tree])], c)
}

/**
 * Plan this request's journal layout from the state the earlier stages built (tracker
 * tiers, symbol entries, selected files, history) and the memory of the last
 * committed request, at time `now` (epoch ms). Pure: the same arguments give the same plan.
 *
 * A full rebuild freezes L0-L2 afresh. When only the history was rewritten (compaction)
 * the journal is written again anyway, so there are two ways on: restart the journal
 * alone, with one update pair for everything that changed since the freeze (the frozen
 * tiers keep their cache), or refreeze the tiers too, which moves that update pair into
 * them. Refreezing is chosen when it writes no more than the restart, or when the
 * difference is paid by the reads already spent on stale copies (the rent-or-buy of
 * "stale copies", at the compaction's discount): otherwise a map that changed since an
 * early freeze would sit in the journal and be rewritten at every compaction.
 */
export const planJournal = (
  state: AssemblyState,
  memory: JournalMemory | undefined,
  now: number,
  expiryMillis: number = 5 * 60 * 1000,
  adaptiveTtl = false,
  prices: CachePriceRatios = DEFAULT_CACHE_PRICES
): JournalPlan => {
  const history = historyOf(state)
  const systemHash = sha256(state.input.systemPrompt)
  const tools = toolsHash(state.input.tools)
  const legend = state.symbols.legend.text
  const full: RebuildReason = memory === undefined
    ? "first request"
    : memory.systemHash !== systemHash
    ? "system prompt changed"
    : memory.toolsHash !== tools
    ? "tools changed"
    : memory.legend !== legend
    ? "legend changed"
    : now - memory.at > (memory.ttl === "1h" ? Math.max(LONG_TTL_MILLIS, expiryMillis) : expiryMillis)
    ? "cache expired"
    : memory.waste > writePrice(memory, prices) * rebuildTokens(memory)
    ? "stale copies"
    : undefined
  // A gap past the short lifetime asks for the long one; it holds until a full rebuild.
  const longGap = adaptiveTtl && memory !== undefined && now - memory.at > expiryMillis
  const ttlOf = (rebuilt: boolean): CacheTtl => (longGap || (memory?.ttl === "1h" && !rebuilt) ? "1h" : "5m")
  const refrozen = (reason: RebuildReason): JournalPlan => {
    const ttl = ttlOf(true)
    return { ...append(state, { ...freeze(state, systemHash, tools, legend), at: now, ttl }, history, prices), rebuild: reason, ttl }
  }
  if (memory === undefined || full !== undefined) return refrozen(full)
  if (extendsHistory(memory.history, history)) {
    const ttl = ttlOf(false)
    return { ...append(state, { ...memory, at: now, ttl }, history, prices), rebuild: undefined, ttl }
  }
  // Compaction: restart the journal, or refreeze the tiers too (see above).
  const ttl = ttlOf(false)
  const restarted = append(state, { ...restartJournal(memory), at: now, ttl }, history, prices)
  const refreeze = refrozen("history rewritten, refrozen")
  const extra = prefixWrites(refreeze, memory, state) - partsTokens(restarted.journal)
  if (extra <= 0 || memory.waste >= writePrice(memory, prices) * extra) return refreeze
  // The journal's stale copies are gone; the reads spent on them buy nothing any more.
  const kept = memory.staleTokens === 0 ? 0 : memory.waste * Math.min(1, restarted.memory.staleTokens / memory.staleTokens)
  return { ...restarted, memory: { ...restarted.memory, waste: kept }, rebuild: "history rewritten", ttl }
}

/**
 * Tokens a refrozen plan writes that a journal restart would not: its frozen tiers after
 * L0 with the tree, L0 itself when its frozen content changes (everything after a
 * changed byte is written), and its journal.
 */
const prefixWrites = (plan: JournalPlan, before: JournalMemory, state: AssemblyState): number => {
  const m = plan.memory
  const sameL0 = sameEntries(m.frozen.L0.symbols, before.frozen.L0.symbols) && sameEntries(m.frozen.L0.files, before.frozen.L0.files)
  const l0 = sameL0 ? 0 : state.counter.count(state.input.systemPrompt) + state.symbols.legend.tokens + sumTokens(m.frozen.L0.symbols) + sumTokens(m.frozen.L0.files)
  return l0 + rebuildTokens(m)
}

const sameEntries = (a: ReadonlyArray<{ readonly key: string; readonly hash: string }>, b: ReadonlyArray<{ readonly key: string; readonly hash: string }>): boolean =>
  a.length === b.length && a.every((e, i) => e.key === b[i]?.key && e.hash === b[i]?.hash)

/** What writing the prefix costs now: the long lifetime's price while the breakpoints ask for it. */
const writePrice = (memory: JournalMemory, prices: CachePriceRatios): number => (memory.ttl === "1h" ? prices.writeLong : prices.write)

/** Frozen tiers from the tracker's tiers now, and an empty journal. */
const freeze = (state: AssemblyState, systemHash: string, tools: string, legend: string): JournalMemory => {
  const tiers = state.symbols.tiers
  const fileTier = (f: FileEntry): FrozenTier | undefined => {
    const tracked = state.tracker.get(f.key)
    if (tracked === undefined || tracked.hash !== f.hash) return undefined
    return tracked.tier === "L0" || tracked.tier === "L1" ? tracked.tier : tracked.tier === "active" ? undefined : "L2"
  }
  const files: Record<FrozenTier, Array<FileEntry>> = { L0: [], L1: [], L2: [] }
  for (const f of state.files) {
    const tier = fileTier(f)
    if (tier !== undefined) files[tier].push(f)
  }
  const frozen: Record<FrozenTier, FrozenContent> = {
    L0: { symbols: tiers.L0, files: files.L0 },
    L1: { symbols: tiers.L1, files: files.L1 },
    L2: { symbols: tiers.L3.length === 0 ? tiers.L2 : [...tiers.L2, ...tiers.L3].sort(byPath), files: files.L2 }
  }
  const treeFiles = state.symbols.existingFiles ?? new Set<string>()
  return restartJournal({
    systemHash,
    toolsHash: tools,
    legend,
    frozen,
    tree: state.symbols.tree,
    frozenTreeFiles: treeFiles,
    treeFiles,
    shownSymbols: new Map(),
    journaledSymbols: new Map(),
    symbolDiffs: new Map(),
    diffNoted: false,
    shownFiles: new Map(),
    history: [],
    historyEdits: [],
    journal: [],
    staleTokens: 0,
    waste: 0,
    requests: 0,
    at: 0,
    ttl: "5m"
  })
}

/** The same frozen tiers with an empty journal: the model has seen only what they show. */
const restartJournal = (memory: JournalMemory): JournalMemory => ({
  ...memory,
  treeFiles: memory.frozenTreeFiles,
  shownSymbols: new Map(FROZEN_TIERS.flatMap((t) => memory.frozen[t].symbols.map((e) => [e.path, e.hash] as const))),
  journaledSymbols: new Map(),
  symbolDiffs: new Map(),
  diffNoted: false,
  shownFiles: new Map(FROZEN_TIERS.flatMap((t) => memory.frozen[t].files.map((f) => [f.path, { hash: f.hash, tokens: f.tokens }] as const))),
  history: [],
  historyEdits: [],
  journal: [],
  staleTokens: 0
})

/** Append new history, then one update pair with what changed since the model last saw it. */
const append = (
  state: AssemblyState,
  memory: JournalMemory,
  history: ReadonlyArray<HistoryEntry>,
  prices: CachePriceRatios
): Omit<JournalPlan, "rebuild" | "ttl"> => {
  // One pass over the map per request; the maps are copied only when something changed.
  const changed: Array<SymbolEntry> = []
  let mapped = 0
  for (const t of ["L0", "L1", "L2", "L3"] as const) {
    for (const e of state.symbols.tiers[t]) {
      const shown = memory.shownSymbols.get(e.path)
      if (shown !== undefined) mapped++
      if (shown !== e.hash) changed.push(e)
    }
  }
  changed.sort(byPath)
  const journal = reedited(memory, history)
  const appended: Array<Part> = [...historyPart(history.slice(memory.history.length))]
  const existing = state.symbols.existingFiles
  const selected = new Set(state.files.map((f) => f.path))
  // A shown block whose file is now selected is superseded by the file (journaled or in
  // the Working Files); one whose file is gone is "deleted"; one whose file stays but has
  // no block any more (too large, binary, unreadable) is "dropped". Looked for only when
  // some shown path is not mapped.
  const gone: Array<string> = []
  const dropped: Array<string> = []
  if (mapped < memory.shownSymbols.size) {
    const current = new Set<string>()
    for (const t of ["L0", "L1", "L2", "L3"] as const) for (const e of state.symbols.tiers[t]) current.add(e.path)
    for (const path of memory.shownSymbols.keys()) {
      if (current.has(path) || selected.has(path)) continue
      if (existing !== undefined && !existing.has(path)) gone.push(path)
      else dropped.push(path)
    }
    gone.sort()
    dropped.sort()
  }
  const added: Array<string> = []
  const removed: Array<string> = []
  if (existing !== undefined && existing !== memory.treeFiles) {
    for (const path of existing) if (!memory.treeFiles.has(path)) added.push(path)
    for (const path of memory.treeFiles) if (!existing.has(path)) removed.push(path)
    added.sort()
    removed.sort()
  }
  const entering = journaledFiles(state, memory)
  const shown = changedSymbols(changed, memory, state)
  const noteDiffs = !memory.diffNoted && shown.some((e) => e.base !== undefined)
  const update = updatePart(entering, shown, gone, dropped, added, removed, state, !journal.some((p) => p.name === "updates"), noteDiffs)
  if (update !== undefined) appended.push(update)
  // A changed block supersedes the copy shown before it, which stays in the prefix: a
  // whole block supersedes the latest full entry and any diff after it, a diff the diff
  // before it. A diff and its full entry count as stale by what they exceed the block
  // by, which a rebuild would save as well.
  let staleTokens = memory.staleTokens
  let shownSymbols = memory.shownSymbols
  let journaledSymbols = memory.journaledSymbols
  let symbolDiffs = memory.symbolDiffs
  if (changed.length + gone.length + dropped.length > 0) {
    const next = new Map(shownSymbols)
    const bases = new Map(journaledSymbols)
    const diffs = new Map(symbolDiffs)
    for (const { entry: e, shown: s, base } of shown) {
      const before = diffs.get(e.path)
      staleTokens += before === undefined ? 0 : before.tokens - before.excess
      if (base !== undefined) {
        const excess = Math.max(0, base.tokens + s.tokens - e.tokens)
        staleTokens += excess
        diffs.set(e.path, { tokens: s.tokens, excess })
      } else {
        if (next.has(e.path)) staleTokens += e.tokens
        bases.set(e.path, { text: e.text, tokens: e.tokens })
        diffs.delete(e.path)
      }
      next.set(e.path, e.hash)
    }
    for (const path of [...gone, ...dropped]) {
      next.delete(path)
      bases.delete(path)
      diffs.delete(path)
    }
    shownSymbols = next
    journaledSymbols = bases
    symbolDiffs = diffs
  }
  // A deselected file's copy stays in the prefix, but its symbol entry (now in the map,
  // so in this update) is newer: the copy is carried as stale, and if the file is selected
  // again it is shown again. A file journaled changed supersedes the copy shown before.
  const deselected = [...memory.shownFiles.keys()].filter((path) => !selected.has(path))
  let shownFiles = memory.shownFiles
  if (entering.length + deselected.length > 0) {
    const next = new Map(shownFiles)
    for (const path of deselected) {
      staleTokens += next.get(path)?.tokens ?? 0
      next.delete(path)
    }
    for (const f of entering) {
      staleTokens += next.get(f.path)?.tokens ?? 0
      next.set(f.path, { hash: f.hash, tokens: f.tokens })
    }
    shownFiles = next
  }
  const next: JournalMemory = {
    ...memory,
    treeFiles: existing ?? memory.treeFiles,
    shownSymbols,
    journaledSymbols,
    symbolDiffs,
    diffNoted: memory.diffNoted || noteDiffs,
    shownFiles,
    history: history.map((h) => h.hash),
    historyEdits: history.map((h) => h.edit ?? ""),
    // No update after the first history message carries a synthetic "Ok." (the memory
    // keeps what is sent, so its token counts stay exact).
    journal: conversationalParts(appended.length === 0 ? journal : appendParts(journal, appended), state.counter).parts,
    staleTokens,
    waste: memory.waste + prices.read * staleTokens,
    requests: memory.requests + 1
  }
  return {
    ...render(next, state),
    workingFiles: state.files.filter((f) => shownFiles.get(f.path)?.hash !== f.hash),
    memory: next
  }
}

/**
 * The selected files this request journals: those whose current content the model has
 * not seen (new to the selection, or changed since it was shown), when a later request
 * will read them from the cache. The copy enters the conversation once, in this
 * request's update, in the user turn where the file appeared (after the history: an
 * agent's task prompt or the tool results of its step; in a chat turn, just before the
 * prompt), and later requests read it with the journal instead of sending it again after
 * the last breakpoint.
 *
 * A later request is expected when the request offers tools or its conversation holds
 * tool exchanges (an agent's loop: its next step follows within seconds, with the same
 * files), or when the file was sent before unchanged (the tracker holds it with this
 * hash: it stays in the selection). A file that fits neither (a chat turn's new or just edited file) waits in
 * the Working Files, uncached, until it comes back unchanged: written to the cache it
 * would cost more (the write price) than sent once uncached, if it is not sent again.
 */
const journaledFiles = (state: AssemblyState, memory: JournalMemory): ReadonlyArray<FileEntry> => {
  const unseen = state.files.filter((f) => memory.shownFiles.get(f.path)?.hash !== f.hash)
  if (unseen.length === 0 || agentLoop(state)) return unseen
  return unseen.filter((f) => state.tracker.get(f.key)?.hash === f.hash)
}

/**
 * Whether the request belongs to an agent's loop: it offers tools, or its conversation
 * holds a tool exchange (a caller may render the tools itself, outside the pipeline).
 */
const agentLoop = (state: AssemblyState): boolean =>
  (state.input.tools?.length ?? 0) > 0 || (state.input.history?.some((m) => m.role === "tool") ?? false)

/**
 * The frozen tiers' symbol blocks by path, built once per freeze (the frozen tiers are
 * one object from a rebuild to the next), not on every request that changes a block.
 */
const frozenSymbols = (frozen: JournalMemory["frozen"]): ReadonlyMap<string, SymbolEntry> => {
  let byPath = frozenByPath.get(frozen)
  if (byPath === undefined) {
    byPath = new Map(FROZEN_TIERS.flatMap((t) => frozen[t].symbols.map((e) => [e.path, e] as const)))
    frozenByPath.set(frozen, byPath)
  }
  return byPath
}
const frozenByPath = new WeakMap<JournalMemory["frozen"], ReadonlyMap<string, SymbolEntry>>()

/**
 * How each changed block is written: as a symbol diff against the file's latest full
 * entry (the journal's, else the frozen tiers') when the model has seen one and the diff
 * is shorter, else whole. The diff is against the full entry, never against an earlier
 * diff, so the model applies one diff to one block.
 */
const changedSymbols = (changed: ReadonlyArray<SymbolEntry>, memory: JournalMemory, state: AssemblyState): ReadonlyArray<ChangedSymbol> => {
  const baseOf = (path: string): Counted | undefined => memory.journaledSymbols.get(path) ?? frozenSymbols(memory.frozen).get(path)
  return changed.map((entry): ChangedSymbol => {
    const whole: ChangedSymbol = { entry, shown: { text: entry.text, tokens: entry.tokens }, base: undefined }
    const base = memory.shownSymbols.has(entry.path) ? baseOf(entry.path) : undefined
    if (base === undefined) return whole
    const hunks = unifiedDiff(base.text, entry.text)
    if (hunks === undefined || hunks === "") return whole
    const diff = counted(symbolDiffEntry(entry.path, hunks), state.counter)
    return diff.tokens < entry.tokens ? { entry, shown: diff, base } : whole
  })
}

/**
 * The journal with the history entries whose edit changed since they were journaled
 * (context editing cleared their results) rendered as they are now. Only the history
 * parts holding them change: the journal before the first one keeps its bytes, and so
 * its cache; everything after it is written once more, which the edit's plan paid for.
 */
const reedited = (memory: JournalMemory, history: ReadonlyArray<HistoryEntry>): ReadonlyArray<Part> => {
  let changed: Set<ItemKey> | undefined
  for (let i = 0; i < memory.history.length; i++) {
    const entry = history[i]!
    if ((entry.edit ?? "") === (memory.historyEdits[i] ?? "")) continue
    ;(changed ??= new Set()).add(entry.key)
  }
  if (changed === undefined) return memory.journal
  const byKey = new Map(history.map((h) => [h.key, h] as const))
  return memory.journal.map((part) => {
    if (part.name !== "history" || !part.items.some((k) => changed.has(k))) return part
    return historyPart(part.items.flatMap((k) => byKey.get(k) ?? []))[0] ?? part
  })
}

/** Tokens a rebuild would rewrite: the frozen tiers after L0 and the journal. */
const rebuildTokens = (memory: JournalMemory): number =>
  sumTokens(memory.frozen.L1.symbols) + sumTokens(memory.frozen.L1.files) + sumTokens(memory.frozen.L2.symbols) + sumTokens(memory.frozen.L2.files) +
  (memory.tree?.tokens ?? 0) + partsTokens(memory.journal)

/**
 * The journal with `parts` appended, a history part following a history part merged into
 * it: the same messages, one breakdown line per run of history.
 */
const appendParts = (journal: ReadonlyArray<Part>, parts: ReadonlyArray<Part>): ReadonlyArray<Part> => {
  const out: Array<Part> = [...journal]
  for (const part of parts) {
    const last = out.at(-1)
    if (last === undefined || last.name !== "history" || part.name !== "history") {
      out.push(part)
      continue
    }
    const count = (p: Part) => p.contents.reduce((n, c) => n + (c.count ?? 0), 0)
    out[out.length - 1] = {
      name: "history",
      messages: [...last.messages, ...part.messages],
      tokens: last.tokens + part.tokens,
      contents: [{ type: "history", count: count(last) + count(part), tokens: last.tokens + part.tokens }],
      items: [...last.items, ...part.items]
    }
  }
  return out
}

// Sections memoize by entries array, so frozen tiers keep rendering the same bytes.
const render = (memory: JournalMemory, state: AssemblyState): Pick<JournalPlan, "frozen" | "tree" | "journal"> => ({
  frozen: {
    L0: { symbols: sectionOf(memory.frozen.L0.symbols, state.counter), files: sectionOf(memory.frozen.L0.files, state.counter) },
    L1: { symbols: sectionOf(memory.frozen.L1.symbols, state.counter), files: sectionOf(memory.frozen.L1.files, state.counter) },
    L2: { symbols: sectionOf(memory.frozen.L2.symbols, state.counter), files: sectionOf(memory.frozen.L2.files, state.counter) }
  },
  tree: memory.tree,
  journal: memory.journal
})

/**
 * What rewriting the history costs the cache in the journal layout: the journal starts
 * over (the frozen tiers keep their cache), so every journal token is invalidated
 * (`invalidated`) and its updates, which are not history, are written again
 * (`rewritten`, about: the new journal carries them merged into one update pair).
 */
export const cacheImpactOfJournalRestart = (memory: JournalMemory): { readonly invalidated: number; readonly rewritten: number } => {
  let invalidated = 0
  let rewritten = 0
  for (const part of memory.journal) {
    invalidated += part.tokens
    if (part.name !== "history") rewritten += part.tokens
  }
  return { invalidated, rewritten }
}
