/**
 * The agent-mode session of a replay (`--session agent`): each commit becomes one task
 * of a simulated coding agent, whose prompt is the commit message. The agent then
 * makes one request per step: it searches or lists the repository, reads each touched
 * file as it was before the commit, edits (calls carrying the commit's diff hunks),
 * runs the tests (a log sized from the diff), and answers. Deterministic: the same
 * history gives the same tool calls and results, byte for byte.
 */
import type { AssistantMessage, ToolCallPart, ToolMessage, ToolResultPart } from "@strata/core/effect"
import { replaySession, replyText, type RepoFile, type ReplayTurn } from "./chatSession.ts"
import { commitPatches, type CommitInfo } from "./git.ts"

/** One step of a task: the assistant message answering a request, and the results of its calls. */
export interface AgentStep {
  /** Tool calls, or (the last step) the final answer. */
  readonly reply: AssistantMessage
  /** The tool message answering `reply`'s calls; undefined for the final answer. */
  readonly results: ToolMessage | undefined
}

/** One task: a commit worked by the agent. Request k of the task carries the replies and results of steps 0..k-1. */
export interface AgentTask {
  /** 0-based task number. */
  readonly index: number
  readonly commit: CommitInfo
  /** The user's prompt: the commit message. */
  readonly prompt: string
  /** One step per request; the last one's reply is the final answer. */
  readonly steps: ReadonlyArray<AgentStep>
  /** The turn this task is built from (the repository before the commit). */
  readonly turn: ReplayTurn
}

export interface AgentSessionOptions {
  readonly from?: string | undefined
  /** Most tasks (default: every commit after `from`). */
  readonly tasks?: number | undefined
}

/** Longest patch an `edit_file` call carries, in characters; the rest is summarized by its line count. */
export const EDIT_PATCH_CHARS = 8_000
/** Most edit steps of a task; beyond that, one step carries several parallel calls. */
export const EDIT_STEPS = 8
const SEARCH_MATCHES = 50
const LIST_PATHS = 200
const STOP_WORDS = new Set(["with", "from", "into", "that", "this", "when", "than", "then", "also", "more", "less", "each", "every", "only", "make", "makes", "adds", "uses", "test", "tests", "docs", "file", "files", "code"])

const call = (task: number, step: number, k: number, toolName: string, input: ToolCallPart["input"]): ToolCallPart => ({
  type: "tool-call",
  toolCallId: `call_${task}_${step}_${k}`,
  toolName,
  input
})

const result = (c: ToolCallPart, value: string): ToolResultPart => ({
  type: "tool-result",
  toolCallId: c.toolCallId,
  toolName: c.toolName,
  // A tool result is never empty text (Bedrock rejects blank text).
  output: { type: "text", value: value.trim() === "" ? "(empty)" : value }
})

const exchange = (calls: ReadonlyArray<ToolCallPart>, values: ReadonlyArray<string>): AgentStep => ({
  reply: { role: "assistant", content: calls },
  results: { role: "tool", content: calls.map((c, i) => result(c, values[i]!)) }
})

/** The word the agent searches for: the subject's longest word of four letters or more, not a stop word. */
export const searchWord = (subject: string): string | undefined => {
  let best: string | undefined
  for (const word of subject.split(/[^A-Za-z0-9_]+/)) {
    if (word.length < 4 || STOP_WORDS.has(word.toLowerCase()) || /^\d+$/.test(word)) continue
    if (best === undefined || word.length > best.length) best = word
  }
  return best
}

/** `path:line: text` for every line containing `word` (case-insensitive), at most 50, then a count of the rest. */
export const searchOutput = (word: string, files: ReadonlyArray<RepoFile>): { readonly text: string; readonly matches: number } => {
  const needle = word.toLowerCase()
  const lines: Array<string> = []
  let matches = 0
  for (const file of files) {
    if (!file.content.toLowerCase().includes(needle)) continue
    file.content.split("\n").forEach((line, i) => {
      if (!line.toLowerCase().includes(needle)) return
      matches++
      if (lines.length < SEARCH_MATCHES) lines.push(`${file.path}:${i + 1}: ${line.trim().slice(0, 160)}`)
    })
  }
  if (matches > lines.length) lines.push(`(${matches - lines.length} more matches)`)
  return { text: lines.join("\n"), matches }
}

const commonFolder = (paths: ReadonlyArray<string>): string => {
  if (paths.length === 0) return ""
  let parts = paths[0]!.split("/").slice(0, -1)
  for (const p of paths.slice(1)) {
    const other = p.split("/").slice(0, -1)
    let n = 0
    while (n < parts.length && n < other.length && parts[n] === other[n]) n++
    parts = parts.slice(0, n)
  }
  return parts.join("/")
}

/** The paths below `folder` ("" for the root), at most 200, then a count of the rest. */
export const listOutput = (folder: string, paths: ReadonlyArray<string>): string => {
  const below = folder === "" ? paths : paths.filter((p) => p.startsWith(`${folder}/`))
  const shown = below.slice(0, LIST_PATHS)
  return [...shown, ...(below.length > shown.length ? [`(${below.length - shown.length} more)`] : [])].join("\n")
}

/** A patch cut at a line boundary to at most `EDIT_PATCH_CHARS`, the rest counted. */
export const cappedPatch = (patch: string): string => {
  if (patch.length <= EDIT_PATCH_CHARS) return patch
  const cut = patch.lastIndexOf("\n", EDIT_PATCH_CHARS)
  const kept = patch.slice(0, cut > 0 ? cut : EDIT_PATCH_CHARS)
  const rest = patch.slice(kept.length).split("\n").filter((l) => l !== "").length
  return `${kept}\n... (${rest} more lines)`
}

/** Deterministic test-runner output whose length follows the diff: 12 lines plus one per 4 changed lines, at most 400. */
export const testLog = (commit: CommitInfo): string => {
  const changed = commit.changes.reduce((sum, c) => sum + c.added + c.deleted, 0)
  const count = Math.min(400, 12 + Math.floor(changed / 4))
  const sources = commit.changes.filter((c) => !c.binary).map((c) => c.path)
  const suites = (sources.length === 0 ? ["src/index"] : sources).map((p) => `test/${(p.split("/").at(-1) ?? p).replace(/\.[^.]+$/, "")}.test.ts`)
  const names = (commit.message.split("\n")[0] ?? "").split(/\s+/).filter((w) => w.length > 2)
  const lines = [" RUN  v4.0.0 /repo", ""]
  for (let i = 0; i < count; i++) {
    const ms = ((i * 7919 + changed) % 97) + 1
    lines.push(` \u2713 ${suites[i % suites.length]} > ${names[i % Math.max(1, names.length)] ?? "case"} ${i + 1} ${ms}ms`)
  }
  const files = new Set(suites).size
  lines.push("", ` Test Files  ${files} passed (${files})`, `      Tests  ${count} passed (${count})`, `   Duration  ${(1 + (changed % 900) / 100).toFixed(2)}s`)
  return lines.join("\n")
}

/** The steps of one task, from the repository before the commit and the commit's patches. */
export const taskSteps = (index: number, turn: ReplayTurn, patches: ReadonlyMap<string, string>): ReadonlyArray<AgentStep> => {
  const commit = turn.commit
  const steps: Array<AgentStep> = []
  const subject = commit.message.split("\n")[0] ?? ""
  // 1. Look around: search for the subject's main word, else list the folder the commit works in.
  const word = searchWord(subject)
  const found = word === undefined ? undefined : searchOutput(word, turn.files)
  if (word !== undefined && found !== undefined && found.matches > 0) {
    steps.push(exchange([call(index, 0, 0, "search", { query: word })], [found.text]))
  } else {
    const folder = commonFolder(commit.changes.map((c) => c.from ?? c.path))
    const listing = listOutput(folder, turn.allPaths)
    const where = listing === "" ? "" : folder
    steps.push(exchange([call(index, 0, 0, "list_files", where === "" ? {} : { path: where })], [listOutput(where, turn.allPaths)]))
  }
  // 2. Read each touched file as it was before the commit.
  for (const file of turn.selected) {
    steps.push(exchange([call(index, steps.length, 0, "read_file", { path: file.path })], [file.content]))
  }
  // 3. Edit: the commit's hunks, one file per step (several per step past EDIT_STEPS files).
  const edits = commit.changes.flatMap((c) => {
    const patch = patches.get(c.path)
    return patch === undefined ? [] : [{ change: c, path: c.path, patch }]
  }).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const perStep = Math.ceil(edits.length / EDIT_STEPS)
  for (let i = 0; i < edits.length; i += perStep) {
    const group = edits.slice(i, i + perStep)
    const step = steps.length
    const calls = group.map((e, k) => call(index, step, k, "edit_file", { path: e.path, patch: cappedPatch(e.patch) }))
    const values = group.map(({ change, path, patch }) => {
      const hunks = patch.split("\n").filter((l) => l.startsWith("@@")).length
      return change.status === "A"
        ? `Created ${path} (${change.added} lines).`
        : change.status === "D"
          ? `Deleted ${path} (${change.deleted} lines).`
          : `Applied ${hunks} hunk${hunks === 1 ? "" : "s"} to ${path}: +${change.added} -${change.deleted} lines.`
    })
    steps.push(exchange(calls, values))
  }
  // 4. Run the tests, 5. answer.
  steps.push(exchange([call(index, steps.length, 0, "run_tests", {})], [testLog(commit)]))
  steps.push({ reply: { role: "assistant", content: replyText(commit) }, results: undefined })
  return steps
}

/**
 * The tasks of an agent replay, in order: the chat session's turns (the same commits,
 * the same files before each commit, read once) with each turn's steps.
 */
export async function* agentSession(repo: string, options: AgentSessionOptions = {}): AsyncGenerator<AgentTask> {
  for await (const turn of replaySession(repo, { from: options.from, turns: options.tasks })) {
    const patches = await commitPatches(repo, turn.commit)
    yield { index: turn.index, commit: turn.commit, prompt: turn.prompt, steps: taskSteps(turn.index, turn, patches), turn }
  }
}
