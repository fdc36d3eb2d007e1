/**
 * The journal layout's data: what it remembers between requests (`JournalMemory`, kept by
 * `AssemblySession` and saved by `journalCodec.ts`) and what it plans for one request
 * (`JournalPlan`, in the state). The planning itself is `layouts/journalPlan.ts`.
 */
import type { Counted, Part, TierSections } from "../../assembly/parts.ts"
import type { CacheTtl } from "../../domain/Block.ts"
import type { ContextEditMemory } from "./contextEditMemory.ts"
import type { Entry, FileEntry, SymbolEntry } from "./entries.ts"

/** The frozen tiers (rendered at the last rebuild). */
export type FrozenTier = "L0" | "L1" | "L2"
export const FROZEN_TIERS: ReadonlyArray<FrozenTier> = ["L0", "L1", "L2"]

/** One frozen tier's content: symbol blocks and reference files, sorted by path. */
export interface FrozenContent {
  readonly symbols: ReadonlyArray<SymbolEntry>
  readonly files: ReadonlyArray<FileEntry>
}

/** What the journal layout remembers between requests (advanced only on commit). */
export interface JournalMemory {
  readonly systemHash: string
  /** The hash of the tool definitions the frozen prefix was built under (`""`: none). */
  readonly toolsHash: string
  readonly legend: string
  readonly frozen: Readonly<Record<FrozenTier, FrozenContent>>
  /** The file tree rendered at the rebuild (with L2), if any, and the files it lists. */
  readonly tree: Entry | undefined
  readonly frozenTreeFiles: ReadonlySet<string>
  /** The files the model was last told exist (tree plus journaled changes). */
  readonly treeFiles: ReadonlySet<string>
  /** Per path, the hash of the symbol block the model saw last (frozen or journaled). */
  readonly shownSymbols: ReadonlyMap<string, string>
  /**
   * Per path, the text of the latest full symbol block the journal shows, when the journal
   * shows one (else the frozen tiers' block is the latest full one): what a symbol diff is
   * made against.
   */
  readonly journaledSymbols: ReadonlyMap<string, Counted>
  /** Per path, the symbol diff the journal shows last, while no full block has superseded it. */
  readonly symbolDiffs: ReadonlyMap<string, SymbolDiff>
  /** Whether the journal carries `SYMBOL_DIFF_NOTE` (at the head of its first update with a diff). */
  readonly diffNoted: boolean
  /** Per path, the file content a frozen tier or the journal shows last (its hash and tokens). */
  readonly shownFiles: ReadonlyMap<string, ShownFile>
  /** Hashes of the history items already in the journal, in order. */
  readonly history: ReadonlyArray<string>
  /** How each of them was edited when it was journaled (`HistoryEntry.edit`, `""`: as given), index-aligned with `history`. */
  readonly historyEdits: ReadonlyArray<string>
  /** The journal (L3): history and update parts, in the order they were appended. */
  readonly journal: ReadonlyArray<Part>
  /** Tokens of superseded copies the request still carries (stale symbol blocks and files, copies of files no longer selected). */
  readonly staleTokens: number
  /** Cache reads spent on stale copies since the rebuild, in base-input tokens. */
  readonly waste: number
  /** Requests since the last full rebuild (its own included). */
  readonly requests: number
  /** When the last committed request was assembled (epoch milliseconds, from `Clock`). */
  readonly at: number
  /** The cache lifetime the breakpoints ask for (`AdaptiveTtl`). */
  readonly ttl: CacheTtl
  /** Context editing's memory, carried here so the saved journal restores it (set on commit). */
  readonly edits?: ContextEditMemory | undefined
}

/**
 * A selected file's content as a frozen tier or the journal shows it: its hash, and its
 * tokens (what the copy costs to carry once it is superseded or its file leaves the
 * selection).
 */
export interface ShownFile {
  readonly hash: string
  readonly tokens: number
}

/**
 * A symbol diff the journal shows: its tokens, and by how many tokens its full entry and
 * it exceed the block they stand for (`excess`, counted in `staleTokens`: a rebuild would
 * show the block alone).
 */
export interface SymbolDiff {
  readonly tokens: number
  readonly excess: number
}

/** Why this request rebuilt the frozen tiers, or `undefined` when it appended. */
export type RebuildReason =
  | "first request"
  | "system prompt changed"
  | "tools changed"
  | "legend changed"
  | "cache expired"
  | "history rewritten"
  | "history rewritten, refrozen"
  | "stale copies"
  | "over the input limit"
  | undefined

/** What the journal layout planned for this request. */
export interface JournalPlan {
  readonly frozen: Readonly<Record<FrozenTier, TierSections>>
  readonly tree: Entry | undefined
  readonly journal: ReadonlyArray<Part>
  /**
   * Selected files shown in the active block: those neither a frozen tier nor the journal
   * shows as they are now, and that this request does not journal (see `planJournal`).
   */
  readonly workingFiles: ReadonlyArray<FileEntry>
  readonly rebuild: RebuildReason
  /** The cache lifetime to ask for: "1h" after a long gap (`AdaptiveTtl`), else "5m", the default. */
  readonly ttl: CacheTtl
  /** The memory to keep once this request succeeds. */
  readonly memory: JournalMemory
}
