import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BlobReader, commitInfo, listCommits, listTree } from "../src/internal/git.ts"
import { replaySession, type ReplayTurn } from "../src/internal/chatSession.ts"
import { replay } from "../src/run.ts"

// A small history with an add, a modify, a rename, a delete, a binary file and a merge.
let repo = ""
const run = (...args: Array<string>) =>
  execFileSync("git", ["-C", repo, ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@example.com",
      GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z"
    }
  })
const write = (path: string, content: string | Buffer) => {
  mkdirSync(join(repo, path, ".."), { recursive: true })
  writeFileSync(join(repo, path), content)
}

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "strata-replay-git-"))
  run("init", "-q", "-b", "main")
  write("src/a.ts", "export const a = 1\n")
  run("add", "-A"); run("commit", "-qm", "initial")
  write("src/a.ts", "export const a = 2\nexport const b = 3\n")
  write("logo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]))
  run("add", "-A"); run("commit", "-qm", "change a, add a binary")
  run("mv", "src/a.ts", "src/renamed.ts"); run("commit", "-qm", "rename a")
  run("checkout", "-qb", "side"); write("side.txt", "side\n"); run("add", "-A"); run("commit", "-qm", "side work")
  run("checkout", "-q", "main"); write("main.txt", "main\n"); run("add", "-A"); run("commit", "-qm", "main work")
  run("merge", "-q", "--no-ff", "-m", "merge side", "side")
  run("rm", "-q", "logo.png"); run("commit", "-qm", "delete the binary")
})
afterAll(() => rmSync(repo, { recursive: true, force: true }))

describe("replay git reader", () => {
  it("lists first-parent commits after the start, oldest first", async () => {
    const { commits } = await listCommits(repo)
    const messages = await Promise.all(commits.map(async (c) => (await commitInfo(repo, c)).message))
    expect(messages).toEqual(["change a, add a binary", "rename a", "main work", "merge side", "delete the binary"])
  })

  it("reports adds, modifies, renames, deletes and binary files", async () => {
    const { commits } = await listCommits(repo)
    const infos = await Promise.all(commits.map((c) => commitInfo(repo, c)))
    expect(infos[0]!.changes).toEqual([
      { status: "A", path: "logo.png", added: 0, deleted: 0, binary: true },
      { status: "M", path: "src/a.ts", added: 2, deleted: 1, binary: false }
    ])
    expect(infos[1]!.changes).toEqual([{ status: "R", path: "src/renamed.ts", from: "src/a.ts", added: 0, deleted: 0, binary: false }])
    expect(infos[3]!.parents).toHaveLength(2)
    expect(infos[3]!.changes.map((c) => [c.status, c.path])).toEqual([["A", "side.txt"]])
    expect(infos[4]!.changes).toEqual([{ status: "D", path: "logo.png", added: 0, deleted: 0, binary: true }])
  })

  it("reads trees and blobs without checking out", async () => {
    const { commits } = await listCommits(repo)
    const tree = await listTree(repo, commits[1]!)
    expect(tree.map((e) => e.path)).toEqual(["logo.png", "src/renamed.ts"])
    const reader = new BlobReader(repo)
    try {
      const [logo, src] = await Promise.all(tree.map((e) => reader.read(e.blob)))
      expect(logo!.length).toBe(8)
      expect(src!.toString("utf8")).toBe("export const a = 2\nexport const b = 3\n")
      expect(await reader.read(tree[1]!.blob)).toBe(src) // cached by object id
    } finally {
      reader.close()
    }
  })
})

describe("replay session", () => {
  const collect = async (options = {}) => {
    const turns: Array<ReplayTurn> = []
    for await (const turn of replaySession(repo, options)) turns.push(turn)
    return turns
  }

  it("selects touched files as they were before the commit and advances after each turn", async () => {
    const turns = await collect({ gapSeconds: 60 })
    expect(turns.map((t) => t.t)).toEqual([0, 60, 120, 180, 240])
    expect(turns[0]!.prompt).toBe("change a, add a binary")
    // The binary file is never selected and never among text files.
    expect(turns[0]!.selected.map((f) => [f.path, f.content])).toEqual([["src/a.ts", "export const a = 1\n"]])
    expect(turns[1]!.selected.map((f) => [f.path, f.content])).toEqual([["src/a.ts", "export const a = 2\nexport const b = 3\n"]])
    expect(turns[1]!.files.map((f) => f.path)).toEqual(["src/a.ts"])
    expect(turns[1]!.allPaths).toEqual(["logo.png", "src/a.ts"])
    expect(turns[2]!.files.map((f) => f.path)).toEqual(["src/renamed.ts"])
    expect(turns[4]!.selected).toEqual([]) // deleting a binary selects nothing
    expect(turns[0]!.reply.length).toBeGreaterThan(200)
  })

  it("is deterministic and honours --turns", async () => {
    const a = await collect({ turns: 3 })
    const b = await collect({ turns: 3 })
    expect(a).toHaveLength(3)
    expect(JSON.stringify(a)).toBe(JSON.stringify(b))
  })
})

describe("replay's default start (strata replay --turns N)", () => {
  it("is recent history: --turns 2 replays the last two commits; --from picks the start; neither replays from the root", async () => {
    const subjects = async (options: { readonly turns?: number; readonly from?: string }) =>
      (await replay({ repo, strategy: "oracle", ...options })).perTurn.map((t) => t.subject)
    expect(await subjects({ turns: 2 })).toEqual(["merge side", "delete the binary"])
    expect(await subjects({ turns: 9 })).toEqual(["change a, add a binary", "rename a", "main work", "merge side", "delete the binary"])
    const root = run("rev-list", "--max-parents=0", "HEAD").trim()
    expect(await subjects({ from: root, turns: 2 })).toEqual(["change a, add a binary", "rename a"])
    expect(await subjects({})).toHaveLength(5)
  })
})
