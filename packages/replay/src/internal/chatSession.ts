/**
 * The chat-mode session of a replay (`--session chat`): a git history turned into a
 * simulated coding session. Each commit after the start is one turn: the files it touches are selected (read at the parent, before the
 * change), the prompt is the commit message, the assistant's reply is text sized like
 * the diff, and after the turn the repository advances to the commit.
 */
import { BlobReader, commitInfo, type CommitInfo, listCommits, listTree, type TreeEntry } from "./git.ts"

/** A text file of the repository at one revision. */
export interface RepoFile {
  readonly path: string
  readonly blob: string
  readonly content: string
}

/** One simulated turn. */
export interface ReplayTurn {
  /** 0-based turn number. */
  readonly index: number
  readonly commit: CommitInfo
  /** Seconds since the session started. */
  readonly t: number
  readonly prompt: string
  /** The assistant's reply: deterministic text whose length follows the diff's. */
  readonly reply: string
  /** Files selected for this turn, as they were before the commit. */
  readonly selected: ReadonlyArray<RepoFile>
  /** Every text file of the repository before the commit, sorted by path. */
  readonly files: ReadonlyArray<RepoFile>
  /** Paths of every file (text or not) before the commit, sorted. */
  readonly allPaths: ReadonlyArray<string>
}

export interface ReplaySessionOptions {
  readonly from?: string | undefined
  readonly turns?: number | undefined
  /** Seconds between turns (default 90). */
  readonly gapSeconds?: number | undefined
  /** Most files selected in one turn (default 8); the largest are dropped first. */
  readonly maxSelectedFiles?: number | undefined
  /** Most bytes selected in one turn (default 120,000); the largest are dropped first. */
  readonly maxSelectedBytes?: number | undefined
  /** Files larger than this never enter context (default 1 MiB). */
  readonly maxFileBytes?: number | undefined
}

const isBinary = (bytes: Buffer): boolean => bytes.subarray(0, 8192).includes(0)

/** Deterministic prose of about `chars` characters, sized like an assistant's answer. */
export const replyText = (commit: CommitInfo): string => {
  const lines = commit.changes.reduce((sum, c) => sum + c.added + c.deleted, 0)
  const chars = Math.min(8_000, 200 + lines * 40)
  const subject = commit.message.split("\n")[0] ?? ""
  const sentence = `Done: ${subject}. I updated ${commit.changes.map((c) => c.path).join(", ") || "nothing"}. `
  let text = ""
  while (text.length < chars) text += sentence
  return text.slice(0, chars)
}

/** Pick the turn's files: touched, existing before the commit, text; largest dropped first. */
const selectFiles = (
  commit: CommitInfo,
  before: ReadonlyMap<string, RepoFile>,
  maxFiles: number,
  maxBytes: number
): ReadonlyArray<RepoFile> => {
  const touched = new Set<string>()
  for (const change of commit.changes) {
    if (change.status === "A") continue // did not exist yet
    touched.add(change.from ?? change.path)
  }
  const candidates = [...touched].flatMap((p) => {
    const file = before.get(p)
    return file === undefined ? [] : [file]
  })
  candidates.sort((a, b) => a.content.length - b.content.length || (a.path < b.path ? -1 : 1))
  const picked: Array<RepoFile> = []
  let bytes = 0
  for (const file of candidates) {
    if (picked.length >= maxFiles || bytes + file.content.length > maxBytes) break
    picked.push(file)
    bytes += file.content.length
  }
  return picked.sort((a, b) => (a.path < b.path ? -1 : 1))
}

/**
 * The turns of a replay, in order. Reads the start tree once, then only the blobs
 * that change.
 */
export async function* replaySession(repo: string, options: ReplaySessionOptions = {}): AsyncGenerator<ReplayTurn> {
  const gap = options.gapSeconds ?? 90
  const maxFiles = options.maxSelectedFiles ?? 8
  const maxBytes = options.maxSelectedBytes ?? 120_000
  const maxFileBytes = options.maxFileBytes ?? 1024 * 1024
  const { start, commits } = await listCommits(repo, options.from === undefined ? {} : { from: options.from })
  const limit = Math.min(commits.length, options.turns ?? commits.length)
  const reader = new BlobReader(repo)
  try {
    const textFiles = new Map<string, RepoFile>()
    let entries: ReadonlyArray<TreeEntry> = []
    const loadTree = async (sha: string) => {
      entries = await listTree(repo, sha)
      const next = new Map<string, RepoFile>()
      await Promise.all(entries.map(async (entry) => {
        const known = textFiles.get(entry.path)
        if (known?.blob === entry.blob) {
          next.set(entry.path, known)
          return
        }
        if (entry.size > maxFileBytes) return
        const bytes = await reader.read(entry.blob)
        if (isBinary(bytes)) return
        next.set(entry.path, { path: entry.path, blob: entry.blob, content: bytes.toString("utf8") })
      }))
      textFiles.clear()
      for (const path of [...next.keys()].sort()) textFiles.set(path, next.get(path)!)
    }
    await loadTree(start)
    for (let i = 0; i < limit; i++) {
      const sha = commits[i]!
      const commit = await commitInfo(repo, sha)
      yield {
        index: i,
        commit,
        t: i * gap,
        prompt: commit.message,
        reply: replyText(commit),
        selected: selectFiles(commit, textFiles, maxFiles, maxBytes),
        files: [...textFiles.values()],
        allPaths: entries.map((e) => e.path)
      }
      await loadTree(sha)
    }
  } finally {
    reader.close()
  }
}
