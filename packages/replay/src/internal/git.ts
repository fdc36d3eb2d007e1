/**
 * Reads a repository's history for replay without ever checking out: commits along
 * the first-parent line, what each touched, and file contents through one long-lived
 * `git cat-file --batch` process. Blob contents are cached by object id (immutable).
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { promisify } from "node:util"

const exec = promisify(execFile)

const git = async (repo: string, args: ReadonlyArray<string>): Promise<string> => {
  const { stdout } = await exec("git", ["-C", repo, ...args], { maxBuffer: 256 * 1024 * 1024, encoding: "utf8" })
  return stdout
}

/** One file change of a commit, relative to its first parent. */
export interface FileChange {
  readonly status: "A" | "M" | "D" | "R" | "C" | "T"
  readonly path: string
  /** For renames and copies: the old path. */
  readonly from?: string
  readonly added: number
  readonly deleted: number
  /** True when git reports the file as binary (numstat `-`). */
  readonly binary: boolean
}

export interface CommitInfo {
  readonly sha: string
  readonly parents: ReadonlyArray<string>
  readonly message: string
  /** Committer time, seconds since the epoch. */
  readonly time: number
  readonly changes: ReadonlyArray<FileChange>
}

/** An entry of a tree listing. */
export interface TreeEntry {
  readonly path: string
  readonly blob: string
  readonly size: number
}

/** Resolve a revision to a full commit id; the error says whether the repository or the revision is the problem. */
export const resolveRev = async (repo: string, rev: string): Promise<string> => {
  try {
    return (await git(repo, ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`])).trim()
  } catch {
    const inside = await git(repo, ["rev-parse", "--is-inside-work-tree"]).then(() => true, () => false)
    const bare = inside ? false : await git(repo, ["rev-parse", "--is-bare-repository"]).then((out) => out.trim() === "true", () => false)
    if (!inside && !bare) throw new Error(`${repo} is not a git repository`)
    throw new Error(rev === "HEAD" ? `${repo} has no commits yet` : `unknown revision ${rev} in ${repo}`)
  }
}

/**
 * The first-parent commits after `from` up to `to` (default HEAD), oldest first.
 * With no `from`, the root commit is the start and is not itself a turn.
 */
export const listCommits = async (repo: string, options: { readonly from?: string; readonly to?: string } = {}): Promise<{ readonly start: string; readonly commits: ReadonlyArray<string> }> => {
  const to = await resolveRev(repo, options.to ?? "HEAD")
  const all = (await git(repo, ["rev-list", "--first-parent", "--reverse", to])).split("\n").filter(Boolean)
  const start = options.from === undefined ? all[0]! : await resolveRev(repo, options.from)
  const index = all.indexOf(start)
  if (index < 0) throw new Error(`${options.from ?? start} is not on the first-parent line of ${options.to ?? "HEAD"}`)
  return { start, commits: all.slice(index + 1) }
}

/**
 * Where a replay of the last `turns` commits starts: the first-parent commit `turns`
 * commits before HEAD (the root commit when the history is shorter).
 */
export const recentStart = async (repo: string, turns: number): Promise<string> => {
  const head = await resolveRev(repo, "HEAD")
  const all = (await git(repo, ["rev-list", "--first-parent", "--reverse", head])).split("\n").filter(Boolean)
  return all[Math.max(0, all.length - 1 - turns)]!
}

/** Message, parents, time and file changes (renames detected) of one commit. */
export const commitInfo = async (repo: string, sha: string): Promise<CommitInfo> => {
  const header = await git(repo, ["show", "-s", "--format=%P%x00%ct%x00%B", sha])
  const [parentsText = "", timeText = "0", message = ""] = header.split("\0")
  const parents = parentsText.trim().split(" ").filter(Boolean)
  const base = parents[0]
  // -z output: status\0path\0 (or status\0from\0to\0 for renames/copies)
  const nameStatus = base === undefined
    ? await git(repo, ["ls-tree", "-r", "-z", "--name-only", sha]).then((t) => t.split("\0").filter(Boolean).flatMap((p) => ["A", p]).join("\0"))
    : await git(repo, ["diff", "--no-color", "-z", "--name-status", "-M", base, sha])
  const numstat = base === undefined
    ? ""
    : await git(repo, ["diff", "--no-color", "-z", "--numstat", "-M", base, sha])
  const stats = parseNumstat(numstat)
  const fields = nameStatus.split("\0").filter((f) => f !== "")
  const changes: Array<FileChange> = []
  for (let i = 0; i < fields.length;) {
    const code = fields[i++]!
    const status = code[0] as FileChange["status"]
    if (status === "R" || status === "C") {
      const from = fields[i++]!
      const path = fields[i++]!
      const s = stats.get(path) ?? { added: 0, deleted: 0, binary: false }
      changes.push({ status, path, from, ...s })
    } else {
      const path = fields[i++]!
      const s = stats.get(path) ?? { added: 0, deleted: 0, binary: false }
      changes.push({ status, path, ...s })
    }
  }
  return { sha, parents, message: message.trim(), time: Number(timeText), changes }
}

const parseNumstat = (text: string): Map<string, { added: number; deleted: number; binary: boolean }> => {
  // -z numstat: "added\tdeleted\tpath\0" or for renames "added\tdeleted\t\0from\0to\0"
  const out = new Map<string, { added: number; deleted: number; binary: boolean }>()
  const parts = text.split("\0")
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]!
    if (entry === "") continue
    const [a = "0", d = "0", path = ""] = entry.split("\t")
    const binary = a === "-"
    const stat = { added: binary ? 0 : Number(a), deleted: binary ? 0 : Number(d), binary }
    if (path === "") {
      i += 2
      out.set(parts[i]!, stat)
    } else {
      out.set(path, stat)
    }
  }
  return out
}

/**
 * The unified diff of a commit against its first parent (against nothing for a root
 * commit), as hunks per file: the text from the first `@@` line on, keyed by the new
 * path (the old one for a deleted file). Binary files have no entry.
 */
export const commitPatches = async (repo: string, commit: Pick<CommitInfo, "sha" | "parents">): Promise<ReadonlyMap<string, string>> => {
  const base = commit.parents[0]
  const text = base === undefined
    ? await git(repo, ["-c", "core.quotePath=false", "diff-tree", "--root", "-r", "-p", "--no-color", "--no-ext-diff", "-U3", "-M", commit.sha])
    : await git(repo, ["-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "-U3", "-M", base, commit.sha])
  const out = new Map<string, string>()
  for (const section of text.split(/^(?=diff --git )/m)) {
    if (!section.startsWith("diff --git ")) continue
    const hunks = section.indexOf("\n@@")
    if (hunks < 0) continue
    const head = section.slice(0, hunks)
    const to = /^\+\+\+ b\/(.*)$/m.exec(head)?.[1]
    const from = /^--- a\/(.*)$/m.exec(head)?.[1]
    const path = to ?? from
    if (path !== undefined) out.set(path, section.slice(hunks + 1).replace(/\n$/, ""))
  }
  return out
}

/** Every blob in a commit's tree, with sizes. */
export const listTree = async (repo: string, sha: string): Promise<ReadonlyArray<TreeEntry>> => {
  const text = await git(repo, ["ls-tree", "-r", "-z", "--long", sha])
  const entries: Array<TreeEntry> = []
  for (const line of text.split("\0")) {
    if (line === "") continue
    const tab = line.indexOf("\t")
    const [, type, blob, size] = line.slice(0, tab).split(/\s+/)
    if (type !== "blob" || blob === undefined) continue
    entries.push({ path: line.slice(tab + 1), blob, size: Number(size) })
  }
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/**
 * Reads blobs through one `git cat-file --batch` process; contents are cached by
 * object id. Call `close()` when done.
 */
export class BlobReader {
  private readonly cache = new Map<string, Buffer>()
  private process: ChildProcessWithoutNullStreams | undefined
  private buffer: Buffer = Buffer.alloc(0)
  private waiting: Array<{ readonly resolve: (b: Buffer) => void; readonly reject: (e: Error) => void }> = []

  private readonly repo: string

  constructor(repo: string) {
    this.repo = repo
  }

  private start(): ChildProcessWithoutNullStreams {
    if (this.process) return this.process
    const child = spawn("git", ["-C", this.repo, "cat-file", "--batch"], { stdio: ["pipe", "pipe", "pipe"] })
    child.stdout.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
      this.drain()
    })
    child.on("error", (error) => this.failAll(error))
    child.on("exit", (code) => {
      if (this.waiting.length > 0) this.failAll(new Error(`git cat-file exited with code ${code}`))
      this.process = undefined
    })
    this.process = child
    return child
  }

  private failAll(error: Error) {
    const waiting = this.waiting
    this.waiting = []
    for (const w of waiting) w.reject(error)
  }

  private drain() {
    while (this.waiting.length > 0) {
      const newline = this.buffer.indexOf(10)
      if (newline < 0) return
      const header = this.buffer.subarray(0, newline).toString("utf8")
      if (header.endsWith(" missing")) {
        this.buffer = this.buffer.subarray(newline + 1)
        this.waiting.shift()!.reject(new Error(`git object ${header.split(" ")[0]} is missing`))
        continue
      }
      const size = Number(header.split(" ")[2])
      const end = newline + 1 + size
      if (this.buffer.length < end + 1) return
      const body = Buffer.from(this.buffer.subarray(newline + 1, end))
      this.buffer = this.buffer.subarray(end + 1)
      this.waiting.shift()!.resolve(body)
    }
  }

  /** The contents of a blob. */
  read(blob: string): Promise<Buffer> {
    const cached = this.cache.get(blob)
    if (cached) return Promise.resolve(cached)
    const child = this.start()
    return new Promise<Buffer>((resolve, reject) => {
      this.waiting.push({
        resolve: (b) => {
          this.cache.set(blob, b)
          resolve(b)
        },
        reject
      })
      child.stdin.write(blob + "\n")
    })
  }

  close(): void {
    this.process?.stdin.end()
    this.process = undefined
  }
}
