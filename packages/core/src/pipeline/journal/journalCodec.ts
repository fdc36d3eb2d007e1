/**
 * The journal layout's memory as JSON, so a session that runs one process per request
 * (the CLI's `strata assemble`) keeps its frozen tiers and journal between requests
 * instead of rebuilding every time. Token counts belong to a tokenizer: memory saved
 * under another encoding is not reused.
 */
import { Option, Schema } from "effect"
import type { Part } from "../../assembly/parts.ts"
import { CacheTtl } from "../../domain/Block.ts"
import { ItemKey } from "../../domain/Item.ts"
import { Message } from "../../domain/Message.ts"
import type { ClearedResult, ContextEditMemory } from "../base/contextEditMemory.ts"
import type { Entry, FileEntry, SymbolEntry } from "../base/entries.ts"
import type { FrozenContent, JournalMemory } from "../base/journalMemory.ts"

const Count = Schema.Number

const EntryJson = Schema.Struct({ key: ItemKey, hash: Schema.String, text: Schema.String, tokens: Count })
const SymbolEntryJson = Schema.Struct({ ...EntryJson.fields, path: Schema.String })
const FileEntryJson = Schema.Struct({ ...EntryJson.fields, path: Schema.String, content: Schema.String })
const FrozenJson = Schema.Struct({ symbols: Schema.Array(SymbolEntryJson), files: Schema.Array(FileEntryJson) })

const ContentJson = Schema.Struct({
  type: Schema.String,
  tokens: Count,
  count: Schema.optionalKey(Count),
  files: Schema.optionalKey(Schema.Array(Schema.String))
})
const PartJson = Schema.Struct({
  name: Schema.String,
  messages: Schema.Array(Message),
  tokens: Count,
  contents: Schema.Array(ContentJson),
  items: Schema.Array(ItemKey)
})

/** Context editing's memory as JSON (cleared results as `[callId, placeholder, reasoningDropped]`). */
const EditsJson = Schema.Struct({
  cleared: Schema.Array(Schema.Tuple([Schema.String, Schema.String, Schema.Boolean])),
  rent: Count,
  at: Count,
  longTtl: Schema.Boolean,
  head: Schema.String,
  items: Count,
  last: Schema.String
})

/**
 * Bumped when the layout of the journal changes, so an old file is ignored, not misread
 * (2: symbol diffs, which need to know which full entry the model saw last; 3: files
 * journaled when they enter the selection, with the tokens of each shown copy).
 */
export const JOURNAL_MEMORY_VERSION = 3

/**
 * The saved form of `JournalMemory` (`.strata/journal.json` in the CLI): sets and maps as
 * arrays, with the format version and the tokenizer encoding the counts are in.
 */
export const JournalMemoryJson = Schema.Struct({
  version: Schema.Literal(JOURNAL_MEMORY_VERSION),
  encoding: Schema.String,
  systemHash: Schema.String,
  /** Absent in files written before tools were tracked: no tools. */
  toolsHash: Schema.optionalKey(Schema.String),
  legend: Schema.String,
  frozen: Schema.Struct({ L0: FrozenJson, L1: FrozenJson, L2: FrozenJson }),
  tree: Schema.optionalKey(EntryJson),
  frozenTreeFiles: Schema.Array(Schema.String),
  treeFiles: Schema.Array(Schema.String),
  shownSymbols: Schema.Array(Schema.Tuple([Schema.String, Schema.String])),
  /** Absent when the journal shows no full symbol block. */
  journaledSymbols: Schema.optionalKey(Schema.Array(Schema.Tuple([Schema.String, Schema.String, Count]))),
  /** Absent when the journal shows no current symbol diff. */
  symbolDiffs: Schema.optionalKey(Schema.Array(Schema.Tuple([Schema.String, Count, Count]))),
  /** Absent: false. */
  diffNoted: Schema.optionalKey(Schema.Boolean),
  /** Per path, the hash and tokens of the file content shown last. */
  shownFiles: Schema.Array(Schema.Tuple([Schema.String, Schema.String, Count])),
  history: Schema.Array(Schema.String),
  /** Absent when no history item was edited (and in files written before context editing). */
  historyEdits: Schema.optionalKey(Schema.Array(Schema.String)),
  journal: Schema.Array(PartJson),
  staleTokens: Count,
  waste: Count,
  requests: Count,
  at: Count,
  ttl: CacheTtl,
  /** Context editing's memory; absent when nothing was planned yet. */
  edits: Schema.optionalKey(EditsJson)
})
export type JournalMemoryJson = typeof JournalMemoryJson.Type

const entry = (e: Entry) => ({ key: e.key, hash: e.hash, text: e.text, tokens: e.tokens })
const frozenJson = (f: FrozenContent) => ({
  symbols: f.symbols.map((e) => ({ ...entry(e), path: e.path })),
  files: f.files.map((e) => ({ ...entry(e), path: e.path, content: e.content }))
})
const part = (p: Part) => ({
  name: p.name,
  messages: p.messages,
  tokens: p.tokens,
  contents: p.contents.map((c) => ({ type: c.type, tokens: c.tokens, ...(c.count === undefined ? {} : { count: c.count }), ...(c.files === undefined ? {} : { files: c.files }) })),
  items: p.items
})

/**
 * The memory as plain JSON data, tagged with the tokenizer `encoding` its counts use.
 *
 * @example
 * ```ts
 * import { encodeJournalMemory } from "@strata/core/effect"
 * // JSON.stringify(encodeJournalMemory(memory, counter.encoding)) -> .strata/journal.json
 * ```
 */
export const encodeJournalMemory = (memory: JournalMemory, encoding: string): JournalMemoryJson => ({
  version: JOURNAL_MEMORY_VERSION,
  encoding,
  systemHash: memory.systemHash,
  ...(memory.toolsHash === "" ? {} : { toolsHash: memory.toolsHash }),
  legend: memory.legend,
  frozen: { L0: frozenJson(memory.frozen.L0), L1: frozenJson(memory.frozen.L1), L2: frozenJson(memory.frozen.L2) },
  ...(memory.tree === undefined ? {} : { tree: entry(memory.tree) }),
  frozenTreeFiles: [...memory.frozenTreeFiles],
  treeFiles: memory.treeFiles === memory.frozenTreeFiles ? [...memory.frozenTreeFiles] : [...memory.treeFiles],
  shownSymbols: [...memory.shownSymbols],
  ...(memory.journaledSymbols.size === 0 ? {} : { journaledSymbols: [...memory.journaledSymbols].map(([path, e]) => [path, e.text, e.tokens] as const) }),
  ...(memory.symbolDiffs.size === 0 ? {} : { symbolDiffs: [...memory.symbolDiffs].map(([path, d]) => [path, d.tokens, d.excess] as const) }),
  ...(memory.diffNoted ? { diffNoted: true } : {}),
  shownFiles: [...memory.shownFiles].map(([path, f]) => [path, f.hash, f.tokens] as const),
  history: memory.history,
  ...(memory.historyEdits.every((e) => e === "") ? {} : { historyEdits: memory.historyEdits }),
  journal: memory.journal.map(part),
  staleTokens: memory.staleTokens,
  waste: memory.waste,
  requests: memory.requests,
  at: memory.at,
  ttl: memory.ttl,
  ...(memory.edits === undefined ? {} : { edits: editsJson(memory.edits) })
})

const editsJson = (e: ContextEditMemory) => ({
  cleared: [...e.cleared].map(([id, r]) => [id, r.placeholder, r.reasoning] as const),
  rent: e.rent,
  at: e.at,
  longTtl: e.longTtl,
  head: e.head,
  items: e.items,
  last: e.last
})

/**
 * Memory back from saved JSON, or `undefined` (a fresh rebuild) when the data is not a
 * journal of this version or its counts are in another `encoding`. Never fails: a bad
 * file costs one rebuild, not a request.
 */
export const decodeJournalMemory = (json: unknown, encoding: string): JournalMemory | undefined => {
  const decoded = Schema.decodeUnknownOption(JournalMemoryJson)(json)
  if (Option.isNone(decoded) || decoded.value.encoding !== encoding) return undefined
  const m = decoded.value
  const frozen = (f: typeof m.frozen.L0): FrozenContent => ({
    symbols: f.symbols.map((e): SymbolEntry => ({ ...e })),
    files: f.files.map((e): FileEntry => ({ ...e }))
  })
  const frozenTreeFiles = new Set(m.frozenTreeFiles)
  const sameTree = m.treeFiles.length === m.frozenTreeFiles.length && m.treeFiles.every((f) => frozenTreeFiles.has(f))
  return {
    systemHash: m.systemHash,
    toolsHash: m.toolsHash ?? "",
    legend: m.legend,
    frozen: { L0: frozen(m.frozen.L0), L1: frozen(m.frozen.L1), L2: frozen(m.frozen.L2) },
    tree: m.tree === undefined ? undefined : { ...m.tree },
    frozenTreeFiles,
    treeFiles: sameTree ? frozenTreeFiles : new Set(m.treeFiles),
    shownSymbols: new Map(m.shownSymbols),
    journaledSymbols: new Map((m.journaledSymbols ?? []).map(([path, text, tokens]) => [path, { text, tokens }] as const)),
    symbolDiffs: new Map((m.symbolDiffs ?? []).map(([path, tokens, excess]) => [path, { tokens, excess }] as const)),
    diffNoted: m.diffNoted ?? false,
    shownFiles: new Map(m.shownFiles.map(([path, hash, tokens]) => [path, { hash, tokens }] as const)),
    history: m.history,
    historyEdits: m.historyEdits ?? m.history.map(() => ""),
    journal: m.journal.map((p): Part => ({ ...p })),
    staleTokens: m.staleTokens,
    waste: m.waste,
    requests: m.requests,
    at: m.at,
    ttl: m.ttl,
    ...(m.edits === undefined ? {} : {
      edits: {
        ...m.edits,
        cleared: new Map(m.edits.cleared.map(([id, placeholder, reasoning]): readonly [string, ClearedResult] => [id, { placeholder, reasoning }]))
      }
    })
  }
}
