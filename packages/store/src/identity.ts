/**
 * A session's key that does not depend on where the repository is checked out: the
 * repository's root commit (the same in every clone), or an id the user configured, plus
 * a session name. A second checkout, on this host or another, continues the same session.
 */
import { execFile } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { SessionKey, SessionName, StateStoreError } from "@strata/core/effect"
import { Effect, Schema } from "effect"

/** The session name used when none is given. */
export const DEFAULT_SESSION_NAME = "default"

/** Where a repository without git history keeps its generated id. */
export const LOCAL_ID_PATH = path.join(".strata", "repository-id")

const gitRootCommits = (root: string): Promise<ReadonlyArray<string>> =>
  new Promise((resolve) => {
    execFile("git", ["-C", root, "rev-list", "--max-parents=0", "HEAD"], { timeout: 10_000 }, (error, stdout) => {
      resolve(error === null ? stdout.split("\n").filter((l) => /^[0-9a-f]{40,64}$/.test(l)) : [])
    })
  })

const decodeName = Schema.decodeUnknownEffect(SessionName)

/** The identity `repositoryIdentity(..., { create: false })` gives a checkout that has none yet. */
export const UNSAVED_LOCAL_ID = "local:unsaved"

/**
 * The repository's identity: `id:<configured>` when given; otherwise `git:<root commit>`
 * (the smallest, when a history has several roots); otherwise a random id kept in
 * `.strata/repository-id` (`local:<uuid>`), which only that checkout shares.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { repositoryIdentity } from "@strata/store"
 * const id = await Effect.runPromise(repositoryIdentity(".")) // "git:2d9088d4..."
 * ```
 */
export const repositoryIdentity = (
  root: string,
  configured?: string | undefined,
  options: { readonly create?: boolean | undefined } = {}
): Effect.Effect<string, StateStoreError> =>
  Effect.gen(function* () {
    if (configured !== undefined && configured.trim() !== "") return `id:${configured.trim()}`
    const roots = yield* Effect.promise(() => gitRootCommits(root))
    const first = [...roots].sort()[0]
    if (first !== undefined) return `git:${first}`
    const file = path.join(root, LOCAL_ID_PATH)
    if (options.create === false) {
      // A reader writes nothing: without an id yet, no session can be stored under one.
      const existing = yield* Effect.promise(() => fs.readFile(file, "utf8").catch(() => undefined))
      return existing !== undefined && /^[0-9a-f-]{36}$/.test(existing.trim()) ? `local:${existing.trim()}` : UNSAVED_LOCAL_ID
    }
    return yield* Effect.tryPromise({
      try: async () => {
        const existing = await fs.readFile(file, "utf8").catch(() => undefined)
        if (existing !== undefined && /^[0-9a-f-]{36}$/.test(existing.trim())) return `local:${existing.trim()}`
        await fs.mkdir(path.dirname(file), { recursive: true })
        const id = randomUUID()
        // Exclusive create: two processes starting together agree on the first one's id.
        const created = await fs.writeFile(file, `${id}\n`, { flag: "wx" }).then(() => true, () => false)
        return `local:${created ? id : (await fs.readFile(file, "utf8")).trim()}`
      },
      catch: (error) =>
        new StateStoreError({ store: file, operation: "create the repository id", reason: error instanceof Error ? error.message : String(error), retryable: false })
    })
  })

/**
 * The key of session `name` (default `default`) in the repository at `root`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { sessionKeyFor } from "@strata/store"
 * const key = await Effect.runPromise(sessionKeyFor(".", { name: "review" })) // { repository: "git:...", name: "review" }
 * ```
 */
export const sessionKeyFor = (
  root: string,
  options: {
    readonly name?: string | undefined
    readonly repositoryId?: string | undefined
    /** False: never create `.strata/repository-id` (a reader's key; see `repositoryIdentity`). */
    readonly create?: boolean | undefined
  } = {}
): Effect.Effect<SessionKey, StateStoreError> =>
  Effect.gen(function* () {
    const name = yield* decodeName(options.name ?? DEFAULT_SESSION_NAME).pipe(
      Effect.mapError(
        () =>
          new StateStoreError({
            store: root,
            operation: "name the session",
            reason: `"${options.name ?? ""}" is not a session name (letters, digits, ".", "_" and "-", up to 128, not starting with ".")`,
            retryable: false
          })
      )
    )
    return { repository: yield* repositoryIdentity(root, options.repositoryId, { create: options.create }), name }
  })
