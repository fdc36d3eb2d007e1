/**
 * The file store, the default: one directory per session under `<repo>/.strata/state/`
 * (`<name>@<repository hash>`),
 * holding a log of checksummed records (`turn-<version>.json`, one per commit) and
 * checkpoints (`snapshot-<version>.json`). A commit runs under an advisory lock file and
 * creates its record with write-to-temp, fsync, link (which refuses to overwrite), fsync
 * of the directory, so concurrent processes on one machine never lose or split a turn.
 */
import { createHash, randomBytes } from "node:crypto"
import { constants as fsConstants } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import {
  applyRewrite,
  applyTurn,
  emptyState,
  formatSessionKey,
  PathOutsideRepo,
  processAlive,
  StateConflict,
  StateStore,
  StateStoreError,
  type CommitResult,
  type HistoryRewrite,
  type ListedSession,
  type LoadedState,
  type RequestPage,
  type RequestRange,
  type SessionFilter,
  type SessionKey,
  type StateSnapshot,
  type StoredRequest,
  type TurnCommit
} from "@strata/core/effect"
import { Clock, Effect, Layer } from "effect"
import {
  decodeStoredRecord,
  encodeStoredRecord,
  parseLogFileName,
  parseRequestsFileName,
  requestsFileName,
  snapshotFileName,
  turnFileName,
  type SnapshotRecord,
  type StoredRecord
} from "./fileFormat.ts"

/** Every point where a commit changes the file system, in order; fault-injection tests kill the process before each. */
export type FileWritePoint =
  | "lock"
  | "unlock"
  | "lock-steal"
  | "cleanup"
  | "quarantine"
  | "mkdir"
  | "temp-write"
  | "temp-sync"
  | "link"
  | "temp-unlink"
  | "dir-sync"
  | "prune"

/** Options of the file store. */
export interface FileStateStoreOptions {
  /** The repository root; nothing is read or written outside it. */
  readonly repoRoot: string
  /** Where session directories go, relative to the root. Default `.strata/state`. */
  readonly directory?: string | undefined
  /**
   * How long a commit waits for another process's lock before failing (retryable).
   * Default 15000 ms: longer than `staleLockMs`, so a crashed holder never fails a commit.
   */
  readonly lockTimeoutMs?: number | undefined
  /**
   * A lock held longer than this (or by a dead process on this host) is taken over. A
   * commit holds it for milliseconds. Default 10000 ms.
   */
  readonly staleLockMs?: number | undefined
  /**
   * Write a checkpoint when the records since the last one outweigh it (and at least
   * this many bytes). Default 262144. Smaller values checkpoint more often.
   */
  readonly checkpointBytes?: number | undefined
  /** Write a checkpoint at least every this many records. Default 256. */
  readonly checkpointEvery?: number | undefined
  /** Called before every file-system change a commit makes. For fault-injection tests. */
  readonly beforeWrite?: ((point: FileWritePoint) => void) | undefined
}

/** How many turn ids a checkpoint keeps, to recognise a retried turn after it. */
const RECENT_TURNS = 1024
const MAX_LOAD_ATTEMPTS = 20

const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const isInside = (root: string, p: string): boolean => {
  const rel = path.relative(root, p)
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
}

/**
 * A session's directory name: its name, then a short hash of the repository identity, so
 * sessions of one name in two repositories (or two configured ids) never share files.
 * Pure.
 *
 * @example
 * ```ts
 * import { sessionDirectoryName } from "@strata/store"
 * sessionDirectoryName({ repository: "git:4b825dc6", name: "default" }) // "default@…" (12 hex digits)
 * ```
 */
export const sessionDirectoryName = (key: SessionKey): string =>
  `${key.name}@${createHash("sha256").update(key.repository).digest("hex").slice(0, 12)}`

/** A state as the log reconstructs it: the snapshot plus what commits need to know. */
interface LogState {
  readonly state: StateSnapshot
  /** Turn ids in commit order (the latest `RECENT_TURNS` from the checkpoint, then every later one). */
  readonly turns: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
  /** Corrupt files a writer may set aside (under the lock). */
  readonly corrupt: ReadonlyArray<string>
  /** The checkpoint the state was built from (0: none) and its size. */
  readonly checkpoint: number
  readonly checkpointBytes: number
  /** Bytes and count of the records after the checkpoint. */
  readonly logBytes: number
  readonly logRecords: number
}

/** A listed file vanished while loading (a checkpoint pruned it): load again. */
class Vanished {
  readonly _tag = "Vanished"
}

/** What every part of a file store shares: where it lives, how it reports failures, its write hook. */
interface FileStore {
  readonly root: string
  /** This machine's name, in lock files: a lock of a dead process on this host is taken over. */
  readonly host: string
  readonly describe: string
  readonly hook: (point: FileWritePoint) => void
  readonly failure: (operation: string, error: unknown, retryable?: boolean) => StateStoreError
  readonly io: <A>(operation: string, f: () => Promise<A>) => Effect.Effect<A, StateStoreError>
}

/** The nearest existing ancestor of `p` (or `p`), symlinks resolved, must stay inside the root. */
const checkInside = (store: FileStore, p: string) =>
  Effect.gen(function* () {
    const root = store.root
    let probe = p
    for (;;) {
      const real = yield* Effect.promise(() => fs.realpath(probe).then((r) => r, (e: unknown) => (errorCode(e) === "ENOENT" ? undefined : "")))
      if (real === "") return yield* new PathOutsideRepo({ path: p, root })
      if (real !== undefined) {
        if (!isInside(root, real)) return yield* new PathOutsideRepo({ path: p, root })
        return
      }
      const up = path.dirname(probe)
      if (up === probe) return
      probe = up
    }
  })

// --- file-system steps -------------------------------------------------------------------

const syncDir = (store: FileStore, dir: string) =>
  store.io("sync the session directory", async () => {
    store.hook("dir-sync")
    const handle = await fs.open(dir, "r")
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  })

/** Read a regular file without following a symlink; undefined when it does not exist. */
const readNoFollow = (store: FileStore, file: string) =>
  Effect.tryPromise({
    try: async () => {
      let handle: fs.FileHandle
      try {
        handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW)
      } catch (error) {
        if (errorCode(error) === "ENOENT") return undefined
        if (errorCode(error) === "ELOOP") return "symlink" as const
        throw error
      }
      try {
        return await handle.readFile()
      } catch (error) {
        // A directory where a record belongs: damage like any other, never a stop.
        if (errorCode(error) === "EISDIR") return "directory" as const
        throw error
      } finally {
        await handle.close()
      }
    },
    catch: (e) => store.failure(`read ${file}`, e)
  })

const tempName = (dir: string) => path.join(dir, `.tmp-${process.pid}-${randomBytes(6).toString("hex")}`)

/**
 * Make `name` hold `bytes`, durably: temp file, fsync, link into place (fails when the
 * name exists, so two writers can never both create one version), unlink the temp,
 * fsync the directory. False when the name was taken.
 */
const createDurably = (store: FileStore, dir: string, name: string, bytes: Buffer) =>
  Effect.gen(function* () {
    const { hook } = store
    const tmp = tempName(dir)
    const created = yield* store.io(`write ${name}`, async () => {
      hook("temp-write")
      const handle = await fs.open(tmp, "wx", 0o644)
      try {
        await handle.writeFile(bytes)
        hook("temp-sync")
        await handle.sync()
      } finally {
        await handle.close()
      }
      try {
        hook("link")
        await fs.link(tmp, path.join(dir, name))
        return true
      } catch (error) {
        if (errorCode(error) === "EEXIST") return false
        throw error
      } finally {
        hook("temp-unlink")
        await fs.unlink(tmp).catch(() => undefined)
      }
    })
    if (created) yield* syncDir(store, dir)
    return created
  })

// --- the lock ----------------------------------------------------------------------------

/** How long a commit waits for the lock, and when a holder's lock counts as abandoned. */
interface LockTimes {
  readonly lockTimeoutMs: number
  readonly staleLockMs: number
}

const lockOf = (dir: string) => path.join(dir, "lock")

/** Who holds a lock file, as far as its (possibly torn) content says. */
interface LockOwner {
  readonly pid?: unknown
  readonly host?: unknown
  readonly at?: unknown
}

const ownerOf = (holder: string): LockOwner => {
  try {
    return JSON.parse(holder) as LockOwner
  } catch {
    return {}
  }
}

/** Move a stale lock aside, then check we moved the lock we judged stale; put back one we did not. */
const stealLock = (store: FileStore, lock: string, holder: string) =>
  Effect.promise(async () => {
    const aside = `${lock}.stale-${randomBytes(6).toString("hex")}`
    store.hook("lock-steal")
    const moved = await fs.rename(lock, aside).then(() => true, () => false)
    if (!moved) return
    const content = await fs.readFile(aside, "utf8").catch(() => undefined)
    if (content !== holder) await fs.link(aside, lock).catch(() => undefined)
    await fs.unlink(aside).catch(() => undefined)
  })

const acquireLock = (store: FileStore, times: LockTimes, dir: string) =>
  Effect.gen(function* () {
    const lock = lockOf(dir)
    const host = store.host
    const start = yield* Clock.currentTimeMillis
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const token = JSON.stringify({ pid: process.pid, host, at: now, nonce: randomBytes(8).toString("hex") })
      const created = yield* Effect.promise(() => {
        store.hook("lock")
        return fs.writeFile(lock, token, { flag: "wx" }).then(() => "ok" as const, (error: unknown) => error)
      })
      if (created === "ok") return token
      if (errorCode(created) !== "EEXIST") return yield* store.failure("take the session lock", created)
      const holder = yield* Effect.promise(() => fs.readFile(lock, "utf8").catch(() => undefined))
      if (holder === undefined) continue
      const owner = ownerOf(holder)
      const pid = typeof owner.pid === "number" ? owner.pid : undefined
      // A lock file without a readable time (torn by a crash), or with a time in the
      // future (a wrong clock, a forged file), ages from its mtime.
      const at =
        typeof owner.at === "number" && Number.isFinite(owner.at) && owner.at <= now
          ? owner.at
          : yield* Effect.promise(() => fs.stat(lock).then((s) => Math.min(s.mtimeMs, now), () => now))
      const dead = pid !== undefined && owner.host === host && !processAlive(pid)
      if (dead || now - at > times.staleLockMs) {
        yield* stealLock(store, lock, holder)
        continue
      }
      if (now - start >= times.lockTimeoutMs) {
        const who = pid === undefined ? "another process" : `process ${pid}${owner.host === host ? "" : ` on ${String(owner.host)}`}`
        return yield* new StateStoreError({
          store: store.describe,
          operation: "take the session lock",
          reason: `${who} has held ${lock} for ${Math.round((now - at) / 1000)} s; try again, or delete the lock file if no Strata process is running`,
          retryable: true
        })
      }
      yield* Effect.sleep(2 + Math.floor(Math.random() * 8))
    }
  })

const releaseLock = (store: FileStore, dir: string, token: string) =>
  Effect.promise(async () => {
    const content = await fs.readFile(lockOf(dir), "utf8").catch(() => undefined)
    if (content === token) {
      store.hook("unlock")
      await fs.unlink(lockOf(dir)).catch(() => undefined)
    }
  })

const withLock = <A, E>(store: FileStore, times: LockTimes, dir: string, body: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(acquireLock(store, times, dir), () => body, (token) => releaseLock(store, dir, token))

// --- reading the log -----------------------------------------------------------------------

/** The versions of the session's checkpoints (newest first) and of its turn records. */
const listLog = (store: FileStore, dir: string) =>
  Effect.map(
    store.io("list the session directory", () => fs.readdir(dir).catch((e: unknown) => (errorCode(e) === "ENOENT" ? [] : Promise.reject(e)))),
    (names) => {
      const snapshots: Array<number> = []
      const turnFiles = new Set<number>()
      for (const name of names) {
        const parsed = parseLogFileName(name)
        if (parsed === undefined) continue
        if (parsed.kind === "snapshot") snapshots.push(parsed.version)
        else turnFiles.add(parsed.version)
      }
      snapshots.sort((a, b) => b - a)
      return { snapshots, turnFiles }
    }
  )

/** One log file decoded, with its size; fails with `Vanished` when it disappeared since the listing. */
const readRecord = (store: FileStore, dir: string, name: string) =>
  Effect.gen(function* () {
    const bytes = yield* readNoFollow(store, path.join(dir, name))
    if (bytes === undefined) return yield* Effect.fail(new Vanished())
    if (bytes === "symlink") return { _tag: "Corrupt" as const, reason: "a symbolic link (refused)", size: 0 }
    if (bytes === "directory") return { _tag: "Corrupt" as const, reason: "a directory, not a record", size: 0 }
    return { ...decodeStoredRecord(bytes), size: bytes.length }
  })

const readLogOnce = (store: FileStore, key: SessionKey, dir: string): Effect.Effect<LogState, StateStoreError | Vanished> =>
  Effect.gen(function* () {
    const { snapshots, turnFiles } = yield* listLog(store, dir)
    const warnings: Array<string> = []
    const corrupt: Array<string> = []
    const read = (name: string) => readRecord(store, dir, name)

    let state = emptyState(key)
    let turns: Array<string> = []
    let checkpoint = 0
    let checkpointBytes = 0
    for (const version of snapshots) {
      const name = snapshotFileName(version)
      const got = yield* read(name)
      if (got._tag === "Record" && got.record.kind === "snapshot" && got.record.version === version) {
        const r: SnapshotRecord = got.record
        state = { session: key, version, history: r.history, tracker: r.tracker, journal: r.journal, record: r.record }
        turns = [...r.recentTurns]
        checkpoint = version
        checkpointBytes = got.size
        break
      }
      warnings.push(`checkpoint ${name} is unusable (${got._tag === "Corrupt" ? got.reason : "wrong record"}); using an older one`)
      corrupt.push(name)
    }
    let logBytes = 0
    let logRecords = 0
    // The chain stops at the first missing or unusable record. Every record after it is
    // set aside with it by the next commit (never kept in the chain): a new turn takes the
    // damaged record's version, and chaining it onto the later records would replay them
    // after it, out of order. The warning names them all, once per load until that commit.
    const setAside = (reason: string | undefined) => {
      const stop = turnFileName(state.version + 1)
      const later = [...turnFiles].filter((v) => v > state.version + 1).sort((x, y) => x - y).map(turnFileName)
      if (reason === undefined && later.length === 0) return
      if (reason !== undefined) corrupt.push(stop)
      corrupt.push(...later)
      const laterText = `${later.length} later record(s) (${later.join(", ")})`
      warnings.push(
        (reason === undefined ? `record ${stop} is missing` : `record ${stop} is unusable (${reason})`) +
          `; the session continues from version ${state.version}; the next commit sets ` +
          (reason === undefined ? `the ${laterText}` : later.length === 0 ? "it" : `it and the ${laterText}`) +
          " aside as <name>.bad.<n>, never to be replayed out of order"
      )
    }
    for (;;) {
      const next = state.version + 1
      if (!turnFiles.has(next)) {
        setAside(undefined)
        break
      }
      const name = turnFileName(next)
      const got = yield* read(name)
      const problem =
        got._tag === "Corrupt"
          ? got.reason
          : got.record.kind === "snapshot" || got.record.kind === "requests" || got.record.version !== next
            ? "wrong record"
            : turns.includes(got.record.turnId)
              ? `it repeats turn ${got.record.turnId}, already applied`
              : undefined
      if (problem !== undefined || got._tag === "Corrupt" || got.record.kind === "snapshot" || got.record.kind === "requests") {
        setAside(problem ?? "wrong record")
        break
      }
      const record: StoredRecord = got.record
      state = record.kind === "turn" ? applyTurn(state, record) : applyRewrite(state, record)
      turns.push(record.turnId)
      logBytes += got.size
      logRecords += 1
    }
    return { state, turns, warnings, corrupt, checkpoint, checkpointBytes, logBytes, logRecords }
  })

const readLog = (store: FileStore, key: SessionKey, dir: string): Effect.Effect<LogState, StateStoreError> =>
  Effect.gen(function* () {
    for (let attempt = 1; ; attempt++) {
      const result = yield* Effect.result(readLogOnce(store, key, dir))
      if (result._tag === "Success") return result.success
      if (result.failure instanceof Vanished) {
        if (attempt < MAX_LOAD_ATTEMPTS) continue
        return yield* store.failure("load the session", "its files kept changing while being read", true)
      }
      return yield* result.failure
    }
  })

// --- commits -------------------------------------------------------------------------------

/** When a commit also writes a checkpoint: by bytes since the last one, or by record count. */
interface CheckpointPolicy {
  readonly checkpointMin: number
  readonly checkpointEvery: number
}

/**
 * Set a damaged file aside as `<name>.bad.<n>` with the first free `n` from 1 (as core's
 * `keepDamagedCopy` numbers its copies): a hard link never replaces an existing copy, so
 * a later damaged file never overwrites an earlier one; then the original goes.
 */
const keepNumbered = async (dir: string, name: string): Promise<void> => {
  const from = path.join(dir, name)
  const isDirectory = await fs.lstat(from).then((st) => st.isDirectory(), () => undefined)
  if (isDirectory === undefined) return
  for (let n = 1; n <= 1000; n++) {
    const to = path.join(dir, `${name}.bad.${n}`)
    if (isDirectory) {
      // A directory cannot be hard-linked; under the lock, a free name is renamed onto.
      if (await fs.lstat(to).then(() => true, () => false)) continue
      await fs.rename(from, to).catch(() => undefined)
      return
    }
    const linked = await fs.link(from, to).then(() => true, (error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return false
      throw error
    }).catch(() => undefined)
    if (linked === undefined) return
    if (linked) {
      await fs.unlink(from).catch(() => undefined)
      return
    }
  }
}

/** Under the lock: remove temp files and stale-lock leftovers of crashed writers, set corrupt files aside. */
const tidy = (store: FileStore, dir: string, log: LogState) =>
  store.io("clean the session directory", async () => {
    const names = await fs.readdir(dir)
    for (const name of names) {
      if (name.startsWith(".tmp-") || name.startsWith("lock.stale-")) {
        store.hook("cleanup")
        await fs.unlink(path.join(dir, name)).catch(() => undefined)
      }
    }
    for (const name of log.corrupt) {
      store.hook("quarantine")
      await keepNumbered(dir, name)
    }
  })

/** Write a checkpoint of `state` and prune what the previous checkpoint made redundant. */
const checkpointAfter = (
  store: FileStore,
  policy: CheckpointPolicy,
  dir: string,
  log: LogState,
  state: StateSnapshot,
  turns: ReadonlyArray<string>,
  recordBytes: number
) =>
  Effect.gen(function* () {
    const logBytes = log.logBytes + recordBytes
    // Checkpoint when reading the records would cost more than reading a checkpoint
    // (so a load reads at most about twice the state), or when they get many.
    if (logBytes < Math.max(policy.checkpointMin, log.checkpointBytes) && log.logRecords + 1 < policy.checkpointEvery) return
    const bytes = encodeStoredRecord({
      kind: "snapshot",
      version: state.version,
      session: state.session,
      history: state.history,
      tracker: state.tracker,
      journal: state.journal,
      record: state.record,
      recentTurns: turns.slice(-RECENT_TURNS)
    })
    const written = yield* createDurably(store, dir, snapshotFileName(state.version), bytes)
    if (!written) return
    // Keep the previous checkpoint and the records after it: if this one is ever
    // found corrupt, the state is rebuilt from them, nothing lost.
    const keepFrom = log.checkpoint
    // The request summaries of the records about to go move to a `requests-` file first;
    // if that fails, nothing is pruned (a later checkpoint tries again).
    const moved = yield* Effect.result(keepRequests(store, dir, keepFrom))
    if (moved._tag === "Failure") return yield* Effect.logWarning(`kept old records of ${formatSessionKey(state.session)}: ${moved.failure.message}`)
    yield* store.io("prune old records", async () => {
      for (const name of await fs.readdir(dir)) {
        const parsed = parseLogFileName(name)
        if (parsed === undefined) continue
        if ((parsed.kind === "turn" && parsed.version <= keepFrom) || (parsed.kind === "snapshot" && parsed.version < keepFrom)) {
          store.hook("prune")
          await fs.unlink(path.join(dir, name)).catch(() => undefined)
        }
      }
    })
  })

/** The request summaries of the turn records up to `upTo` that no `requests-` file holds yet, written to one. */
const keepRequests = (store: FileStore, dir: string, upTo: number) =>
  Effect.gen(function* () {
    const names = yield* store.io("list the session directory", () => fs.readdir(dir))
    const covered = names.map(parseRequestsFileName).reduce((m, r) => Math.max(m, r?.last ?? 0), 0)
    const versions = names.map(parseLogFileName).flatMap((p) => (p?.kind === "turn" && p.version <= upTo && p.version > covered ? [p.version] : [])).sort((a, b) => a - b)
    if (versions.length === 0) return
    const requests: Array<StoredRequest> = []
    for (const version of versions) {
      const got = yield* Effect.catchTag(readRecord(store, dir, turnFileName(version)), "Vanished", () => Effect.succeed(undefined))
      if (got?._tag === "Record" && got.record.kind === "turn" && got.record.request !== undefined) requests.push({ version, request: got.record.request })
    }
    const first = versions[0] ?? 1
    const last = versions.at(-1) ?? first
    // Taken (false): a checkpoint that crashed after writing it; its content is the same.
    yield* createDurably(store, dir, requestsFileName(first, last), encodeStoredRecord({ kind: "requests", first, version: last, requests }))
  })

/** Request summaries of a session from `from` on, at most `limit` (plus whether more follow): `requests-` files, then turn records. */
const readRequests = (store: FileStore, dir: string, range: RequestRange) =>
  Effect.gen(function* () {
    const limit = Math.max(0, Math.floor(range.limit))
    const names = yield* store.io("list the session directory", () => fs.readdir(dir).catch((e: unknown) => (errorCode(e) === "ENOENT" ? [] : Promise.reject(e))))
    const chunks = names.flatMap((n) => {
      const r = parseRequestsFileName(n)
      return r === undefined || r.last < range.from ? [] : [{ name: n, ...r }]
    }).sort((a, b) => a.first - b.first)
    const turns = names.flatMap((n) => {
      const p = parseLogFileName(n)
      return p?.kind === "turn" && p.version >= range.from ? [p.version] : []
    }).sort((a, b) => a - b)
    const found = new Map<number, StoredRequest>()
    const enough = () => found.size > limit
    const skipVanished = <A>(e: Effect.Effect<A, StateStoreError | Vanished>) => Effect.catchTag(e, "Vanished", () => Effect.succeed(undefined))
    for (const chunk of chunks) {
      if (enough()) break
      const got = yield* skipVanished(readRecord(store, dir, chunk.name))
      if (got?._tag !== "Record" || got.record.kind !== "requests") continue
      for (const r of got.record.requests) if (r.version >= range.from) found.set(r.version, r)
    }
    let coveredUpTo = chunks.reduce((m, c) => Math.max(m, c.last), 0)
    for (const version of turns) {
      if (enough()) break
      if (version <= coveredUpTo && found.has(version)) continue
      const got = yield* skipVanished(readRecord(store, dir, turnFileName(version)))
      if (got?._tag === "Record" && got.record.kind === "turn" && got.record.request !== undefined) found.set(version, { version, request: got.record.request })
      coveredUpTo = Math.max(coveredUpTo, version)
    }
    const sorted = [...found.values()].sort((a, b) => a.version - b.version)
    return { requests: sorted.slice(0, limit), next: sorted[limit]?.version } satisfies RequestPage
  })

/** A session directory's name: the session's name, then 12 hex digits of its repository. */
const SESSION_DIRECTORY = /^([A-Za-z0-9_-][A-Za-z0-9._-]{0,127})@([0-9a-f]{12})$/

/** One commit of a store's settings: the lock times and the checkpoint policy. */
interface CommitSettings extends LockTimes, CheckpointPolicy {}

/** Under the lock: append `record` as the next version unless the base moved or the turn already counted. */
const appendRecord = (
  store: FileStore,
  settings: CommitSettings,
  key: SessionKey,
  dir: string,
  commit: { readonly baseVersion: number; readonly turnId: string; readonly record: (version: number) => StoredRecord; readonly apply: (state: StateSnapshot) => StateSnapshot }
): Effect.Effect<CommitResult, StateConflict | StateStoreError> =>
  Effect.gen(function* () {
    const { baseVersion, turnId } = commit
    const log = yield* readLog(store, key, dir)
    yield* tidy(store, dir, log)
    if (log.turns.includes(turnId)) return { version: log.state.version, duplicate: true }
    const conflict = (actual: number) =>
      new StateConflict({ session: formatSessionKey(key), expected: baseVersion, actual })
    if (log.state.version !== baseVersion) return yield* conflict(log.state.version)
    const version = baseVersion + 1
    const bytes = encodeStoredRecord(commit.record(version))
    const created = yield* createDurably(store, dir, turnFileName(version), bytes)
    // Taken: another writer holds a lock it took over from us (we stalled past staleLockMs).
    if (!created) return yield* conflict(version)
    const names = yield* store.io("list the session directory", () => fs.readdir(dir))
    if (names.some((n) => parseLogFileName(n)?.kind === "snapshot" && (parseLogFileName(n)?.version ?? 0) >= version)) {
      // Checkpointed past us by such a writer: the record may be ignored. A retry
      // with the same turn id finds out whether it counted.
      return yield* conflict(version)
    }
    const turns = [...log.turns, turnId]
    // The turn is durable now; a checkpoint that fails (a full disk) is retried by a
    // later commit and must not report this one as failed.
    yield* checkpointAfter(store, settings, dir, log, commit.apply(log.state), turns, bytes.length).pipe(
      Effect.catch((error) => Effect.logWarning(`skipped a checkpoint of ${formatSessionKey(key)}: ${error.message}`))
    )
    return { version, duplicate: false }
  })

/**
 * Build a file store's service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StateStore } from "@strata/core/effect"
 * import { FileStateStore } from "@strata/store"
 * const program = Effect.gen(function* () {
 *   const store = yield* StateStore
 *   const { snapshot } = yield* store.load({ repository: "git:4b825dc6", name: "default" })
 *   return snapshot.version
 * }).pipe(Effect.provide(FileStateStore.layer({ repoRoot: "." })))
 * ```
 */
export const makeFileStateStore = (options: FileStateStoreOptions): Effect.Effect<StateStore["Service"], StateStoreError | PathOutsideRepo> =>
  Effect.gen(function* () {
    const settings: CommitSettings = {
      lockTimeoutMs: options.lockTimeoutMs ?? 15_000,
      staleLockMs: options.staleLockMs ?? 10_000,
      checkpointMin: options.checkpointBytes ?? 262_144,
      checkpointEvery: Math.max(1, options.checkpointEvery ?? 256)
    }
    const describe = `files under ${path.join(options.repoRoot, options.directory ?? path.join(".strata", "state"))}`
    const failure = (operation: string, error: unknown, retryable = false) =>
      new StateStoreError({ store: describe, operation, reason: reasonOf(error), retryable })
    const io = <A>(operation: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (e) => failure(operation, e) })

    const root = yield* io("resolve the repository root", () => fs.realpath(options.repoRoot))
    const base = path.resolve(root, options.directory ?? path.join(".strata", "state"))
    if (!isInside(root, base)) return yield* new PathOutsideRepo({ path: base, root })
    const store: FileStore = { root, host: os.hostname(), describe, hook: options.beforeWrite ?? (() => {}), failure, io }
    yield* checkInside(store, base)

    const dirOf = (key: SessionKey) => path.join(base, sessionDirectoryName(key))
    // A directory's key never changes: read once (from its newest record naming it), kept.
    const keys = new Map<string, SessionKey>()
    const keyOf = (dir: string, log: ReadonlyArray<{ readonly kind: "turn" | "snapshot"; readonly version: number }>) =>
      Effect.gen(function* () {
        for (const entry of log.filter((e) => e.kind === "snapshot" || e.version === 1)) {
          const name = entry.kind === "turn" ? turnFileName(entry.version) : snapshotFileName(entry.version)
          const got = yield* Effect.catchTag(readRecord(store, dir, name), "Vanished", () => Effect.succeed(undefined))
          if (got?._tag !== "Record") continue
          const record = got.record
          if (record.kind === "snapshot" || ((record.kind === "turn" || record.kind === "rewrite") && record.session !== undefined)) return record.session
        }
        // Written before records named their session, and never checkpointed: listed only
        // when asked for its repository.
        return undefined
      })

    const commitRecord = (
      key: SessionKey,
      baseVersion: number,
      turnId: string,
      record: (version: number) => StoredRecord,
      apply: (state: StateSnapshot) => StateSnapshot
    ): Effect.Effect<CommitResult, StateConflict | StateStoreError | PathOutsideRepo> =>
      Effect.gen(function* () {
        const dir = dirOf(key)
        yield* checkInside(store, dir)
        yield* io("create the session directory", async () => {
          store.hook("mkdir")
          await fs.mkdir(dir, { recursive: true })
        })
        yield* checkInside(store, dir)
        return yield* withLock(store, settings, dir, appendRecord(store, settings, key, dir, { baseVersion, turnId, record, apply }))
      })

    const service: StateStore["Service"] = {
      describe,
      load: Effect.fn("StateStore.load")(function* (key: SessionKey) {
        const dir = dirOf(key)
        yield* checkInside(store, dir)
        const log = yield* readLog(store, key, dir)
        return { snapshot: log.state, warnings: log.warnings } satisfies LoadedState
      }),
      // The newest record's version, from the directory listing alone (no record is read).
      version: Effect.fn("StateStore.version")(function* (key: SessionKey) {
        const dir = dirOf(key)
        yield* checkInside(store, dir)
        const { snapshots, turnFiles } = yield* listLog(store, dir)
        let version = snapshots[0] ?? 0
        for (const v of turnFiles) if (v > version) version = v
        return version
      }),
      commit: Effect.fn("StateStore.commit")(function* (turn: TurnCommit) {
        return yield* commitRecord(
          turn.session,
          turn.baseVersion,
          turn.turnId,
          (version) => ({
            kind: "turn",
            version,
            turnId: turn.turnId,
            append: turn.append,
            patch: turn.patch,
            ...(turn.request === undefined ? {} : { request: turn.request }),
            // The first record names the session (a listing reads it until a checkpoint does).
            ...(version === 1 ? { session: turn.session } : {})
          }),
          (state) => applyTurn(state, turn)
        )
      }),
      rewriteHistory: Effect.fn("StateStore.rewriteHistory")(function* (rewrite: HistoryRewrite) {
        return yield* commitRecord(
          rewrite.session,
          rewrite.baseVersion,
          rewrite.turnId,
          (version) => ({ kind: "rewrite", version, turnId: rewrite.turnId, history: rewrite.history, patch: rewrite.patch, ...(version === 1 ? { session: rewrite.session } : {}) }),
          (state) => applyRewrite(state, rewrite)
        )
      }),
      requests: Effect.fn("StateStore.requests")(function* (key: SessionKey, range: RequestRange) {
        const dir = dirOf(key)
        yield* checkInside(store, dir)
        return yield* readRequests(store, dir, range)
      }),
      sessions: Effect.fn("StateStore.sessions")(function* (filter?: SessionFilter) {
        const entries = yield* io("list sessions", () => fs.readdir(base, { withFileTypes: true }).catch((e: unknown) => (errorCode(e) === "ENOENT" ? [] : Promise.reject(e))))
        const wanted = filter?.repository === undefined ? undefined : sessionDirectoryName({ repository: filter.repository, name: "x" }).slice(2)
        const listed: Array<ListedSession> = []
        for (const entry of entries) {
          const m = entry.isDirectory() ? SESSION_DIRECTORY.exec(entry.name) : null
          if (m === null || (wanted !== undefined && m[2] !== wanted)) continue
          const dir = path.join(base, entry.name)
          const names = yield* io("list a session directory", () => fs.readdir(dir).catch(() => [] as Array<string>))
          const log = names.flatMap((n) => {
            const p = parseLogFileName(n)
            return p === undefined ? [] : [p]
          }).sort((a, b) => b.version - a.version)
          const version = log[0]?.version ?? 0
          if (version === 0) continue
          const key = filter?.repository !== undefined
            ? { repository: filter.repository, name: m[1] ?? "" }
            : keys.get(entry.name) ?? (yield* keyOf(dir, log))
          if (key === undefined) continue
          keys.set(entry.name, key)
          listed.push({ key, version })
        }
        return listed.sort((a, b) => a.key.repository.localeCompare(b.key.repository) || a.key.name.localeCompare(b.key.name))
      })
    }
    return service
  })

/**
 * The file store as a Layer for core's `StateStore`.
 *
 * @example
 * ```ts
 * import { FileStateStore } from "@strata/store"
 * const layer = FileStateStore.layer({ repoRoot: "/path/to/repo" })
 * ```
 */
export const FileStateStore = {
  layer: (options: FileStateStoreOptions): Layer.Layer<StateStore, StateStoreError | PathOutsideRepo> =>
    Layer.effect(StateStore, makeFileStateStore(options))
} as const
