/**
 * The file store's on-disk records: one header line with the body's length and SHA-256,
 * then the body as JSON. A torn or corrupted file fails the check and is never mistaken
 * for state. Pure functions over strings and bytes.
 */
import { createHash } from "node:crypto"
import { HistoryRewrite, SessionKey, StatePatch, StoredRequest, TurnCommit, TurnId } from "@strata/core/effect"
import { Message } from "@strata/core"
import { Result, Schema } from "effect"

/** The first word of every record; the number after it is the format version. */
export const FILE_MAGIC = "strata-state"
export const FILE_FORMAT_VERSION = 1

const Version = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1))

/** One committed turn (`turn-<version>.json`). */
export const TurnRecord = Schema.Struct({
  kind: Schema.Literal("turn"),
  version: Version,
  turnId: TurnId,
  append: TurnCommit.fields.append,
  patch: StatePatch,
  /** The turn's request summary (`TurnCommit.request`), moved to a `requests-` file when the turn's record is pruned. */
  request: Schema.optionalKey(Schema.Json),
  /** The session's key, in the first record only, so a listing names a session before its first checkpoint. */
  session: Schema.optionalKey(SessionKey)
})
export type TurnRecord = typeof TurnRecord.Type

/** One history rewrite (`turn-<version>.json` too: it is a step of the same log). */
export const RewriteRecord = Schema.Struct({
  kind: Schema.Literal("rewrite"),
  version: Version,
  turnId: TurnId,
  history: HistoryRewrite.fields.history,
  patch: StatePatch,
  session: Schema.optionalKey(SessionKey)
})
export type RewriteRecord = typeof RewriteRecord.Type

/** A checkpoint of the whole state (`snapshot-<version>.json`), so a load reads few records. */
export const SnapshotRecord = Schema.Struct({
  kind: Schema.Literal("snapshot"),
  version: Version,
  session: SessionKey,
  history: Schema.Array(Message),
  tracker: Schema.NullOr(Schema.Json),
  journal: Schema.NullOr(Schema.Json),
  record: Schema.NullOr(Schema.Json),
  /** The ids of the latest turns, so a retried turn is still recognised after a checkpoint. */
  recentTurns: Schema.Array(TurnId)
})
export type SnapshotRecord = typeof SnapshotRecord.Type

/**
 * The request summaries of pruned turns (`requests-<first>-<last>.json`): written before
 * the turn records that carried them are deleted, so a summary outlives its turn's record.
 */
export const RequestsRecord = Schema.Struct({
  kind: Schema.Literal("requests"),
  first: Version,
  version: Version,
  requests: Schema.Array(StoredRequest)
})
export type RequestsRecord = typeof RequestsRecord.Type

export const StoredRecord = Schema.Union([TurnRecord, RewriteRecord, SnapshotRecord, RequestsRecord])
export type StoredRecord = typeof StoredRecord.Type

const decodeRecord = Schema.decodeUnknownResult(StoredRecord)

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex")

/**
 * A record's bytes: `strata-state 1 <length> <sha256>\n<json>\n`.
 *
 * @example
 * ```ts
 * import { decodeStoredRecord, encodeStoredRecord } from "@strata/store"
 * const bytes = encodeStoredRecord({ kind: "turn", version: 1, turnId: "t1", append: [], patch: {} })
 * decodeStoredRecord(bytes)._tag // "Record"
 * ```
 */
export const encodeStoredRecord = (record: StoredRecord): Buffer => {
  const body = Buffer.from(JSON.stringify(record), "utf8")
  const header = Buffer.from(`${FILE_MAGIC} ${FILE_FORMAT_VERSION} ${body.length} ${sha256(body)}\n`, "utf8")
  return Buffer.concat([header, body, Buffer.from("\n")])
}

/** A record read back, or why it cannot be used. */
export type DecodedRecord =
  | { readonly _tag: "Record"; readonly record: StoredRecord }
  | { readonly _tag: "Corrupt"; readonly reason: string }

/** Check and decode a record's bytes. Never throws. Pure. */
export const decodeStoredRecord = (bytes: Buffer): DecodedRecord => {
  const newline = bytes.indexOf(0x0a)
  if (newline < 0) return { _tag: "Corrupt", reason: "no header line (an interrupted write)" }
  const header = bytes.subarray(0, newline).toString("utf8").split(" ")
  if (header.length !== 4 || header[0] !== FILE_MAGIC) return { _tag: "Corrupt", reason: "not a Strata state record" }
  if (header[1] !== String(FILE_FORMAT_VERSION)) {
    return { _tag: "Corrupt", reason: `format version ${header[1] ?? "?"}, this Strata reads version ${FILE_FORMAT_VERSION}` }
  }
  if (!/^\d{1,12}$/.test(header[2] ?? "") || !/^[0-9a-f]{64}$/.test(header[3] ?? "")) return { _tag: "Corrupt", reason: "a damaged header" }
  const length = Number(header[2])
  const body = bytes.subarray(newline + 1, newline + 1 + length)
  if (body.length !== length || bytes.length !== newline + 1 + length + 1 || bytes[bytes.length - 1] !== 0x0a) {
    return { _tag: "Corrupt", reason: `expected ${header[2] ?? "?"} bytes of body, found ${bytes.length - newline - 1} (torn write)` }
  }
  if (sha256(body) !== header[3]) return { _tag: "Corrupt", reason: "checksum mismatch" }
  let json: unknown
  try {
    json = JSON.parse(body.toString("utf8"))
  } catch {
    return { _tag: "Corrupt", reason: "checksum matches but the body is not JSON" }
  }
  const decoded = decodeRecord(json)
  return Result.isSuccess(decoded)
    ? { _tag: "Record", record: decoded.success }
    : { _tag: "Corrupt", reason: `not a valid record: ${decoded.failure.message}` }
}

const pad = (version: number): string => String(version).padStart(12, "0")

/** File names of the log: zero-padded so they sort by version. Pure. */
export const turnFileName = (version: number): string => `turn-${pad(version)}.json`
export const snapshotFileName = (version: number): string => `snapshot-${pad(version)}.json`

/** The version in a log file's name, or undefined for another file. Pure. */
export const parseLogFileName = (name: string): { readonly kind: "turn" | "snapshot"; readonly version: number } | undefined => {
  const m = /^(turn|snapshot)-(\d{12})\.json$/.exec(name)
  if (m === null) return undefined
  const kind = m[1] === "turn" ? "turn" : "snapshot"
  return { kind, version: Number(m[2]) }
}

/** The file of the request summaries of versions `first` to `last`. Pure. */
export const requestsFileName = (first: number, last: number): string => `requests-${pad(first)}-${pad(last)}.json`

/** The versions a `requests-` file covers, or undefined for another file. Pure. */
export const parseRequestsFileName = (name: string): { readonly first: number; readonly last: number } | undefined => {
  const m = /^requests-(\d{12})-(\d{12})\.json$/.exec(name)
  return m === null ? undefined : { first: Number(m[1]), last: Number(m[2]) }
}
