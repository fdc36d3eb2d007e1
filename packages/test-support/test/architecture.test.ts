// The repository's import rules, checked on every package's sources: no import cycle
// between files, none between sibling folders, none between folders counting each
// folder's own files (a child importing its parent's files), and workspace imports that point one way
// (core <- tiers, symbols, providers <- cli). A failure names the cycle or the import.
import { readdirSync, readFileSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const PACKAGES_DIR = fileURLToPath(new URL("../../", import.meta.url))

/** The workspace packages each package may import (`cli` composes them all). */
const ALLOWED: Readonly<Record<string, ReadonlyArray<string>>> = {
  core: [],
  tiers: ["core"],
  symbols: ["core"],
  providers: ["core"],
  store: ["core"],
  // The MCP server builds on the index, the price tables and the session store.
  mcp: ["core", "symbols", "providers", "store"],
  // The benchmark lab replays sessions through the tracker, the index and the simulators,
  // and the proxy's transform (its `proxy` strategies measure what the proxy sends).
  replay: ["core", "tiers", "symbols", "providers", "proxy"],
  // The proxy and the dashboard read and write sessions through the store, priced by providers.
  proxy: ["core", "providers", "store"],
  ui: ["core", "providers", "store"],
  cli: ["core", "tiers", "symbols", "providers", "store", "replay", "mcp", "proxy", "ui"],
  // Test helpers: imported by tests only, never by a package's sources.
  "test-support": []
}

interface SourceFile {
  /** Path relative to the package's `src`, with forward slashes. */
  readonly path: string
  /** Import, export-from and dynamic-import specifiers, comments and strings excluded. */
  readonly specifiers: ReadonlyArray<string>
  /** A barrel: a file holding nothing but imports and re-exports (an `index.ts`, most often). */
  readonly barrel?: boolean
}

const walk = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = NodePath.join(dir, entry.name)
    return entry.isDirectory() ? walk(full) : entry.name.endsWith(".ts") ? [full] : []
  })

// `preProcessFile` is TypeScript's own import scanner: it sees `import type`, `export
// ... from` and `import()`, and skips `@example` blocks in comments.
const specifiersOf = (text: string): ReadonlyArray<string> =>
  ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName)

/** Does this source hold nothing but imports and re-exports? */
const reExportsOnly = (text: string): boolean =>
  ts.createSourceFile("index.ts", text, ts.ScriptTarget.Latest).statements.every((s) =>
    ts.isImportDeclaration(s) || (ts.isExportDeclaration(s) && s.moduleSpecifier !== undefined)
  )

const sourcesOf = (pkg: string): ReadonlyArray<SourceFile> => {
  const src = NodePath.join(PACKAGES_DIR, pkg, "src")
  return walk(src).map((file) => {
    const path = NodePath.relative(src, file).split(NodePath.sep).join("/")
    const text = readFileSync(file, "utf8")
    return { path, specifiers: specifiersOf(text), barrel: reExportsOnly(text) }
  })
}

/** A relative specifier resolved against the importing file, or undefined when it leaves `src`. */
const resolveRelative = (from: string, specifier: string): string | undefined => {
  const joined = NodePath.posix.normalize(NodePath.posix.join(NodePath.posix.dirname(from), specifier))
  return joined.startsWith("../") ? undefined : joined
}

type Graph = ReadonlyMap<string, ReadonlySet<string>>

/**
 * The cycles of a graph: per strongly connected component (Tarjan), the shortest cycle
 * through each of its nodes, each cycle listed once.
 */
const cyclesOf = (graph: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const components: Array<ReadonlyArray<string>> = []
  let next = 0
  const visit = (node: string): void => {
    index.set(node, next)
    low.set(node, next)
    next++
    stack.push(node)
    onStack.add(node)
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || graph.get(node)?.has(node)) components.push(component)
  }
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node)
  const cycles = new Map<string, ReadonlyArray<string>>()
  for (const component of components) {
    for (const node of [...component].sort()) {
      const cycle = cycleThrough(graph, new Set(component), node)
      const ring = cycle.slice(0, -1)
      const first = ring.indexOf([...ring].sort()[0]!)
      const canonical = [...ring.slice(first), ...ring.slice(0, first)].join(" -> ")
      if (!cycles.has(canonical)) cycles.set(canonical, cycle)
    }
  }
  return [...cycles.values()]
}

// A shortest path from `start` back to itself inside its component: a cycle a reader can
// follow, e.g. `a.ts -> b.ts -> a.ts`.
const cycleThrough = (graph: Graph, component: ReadonlySet<string>, start: string): ReadonlyArray<string> => {
  const parent = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const node = queue.shift()!
    for (const to of [...(graph.get(node) ?? [])].sort()) {
      if (!component.has(to)) continue
      if (to === start) {
        const path = [node]
        while (path[0] !== start) path.unshift(parent.get(path[0]!)!)
        return [...path, start]
      }
      if (parent.has(to)) continue
      parent.set(to, node)
      queue.push(to)
    }
  }
  return [start, start]
}

const addEdge = (graph: Map<string, Set<string>>, from: string, to: string): void => {
  const out = graph.get(from) ?? new Set<string>()
  out.add(to)
  graph.set(from, out)
}

/** Files: an edge per relative import between two files of the package. */
const fileGraph = (files: ReadonlyArray<SourceFile>): Graph => {
  const graph = new Map<string, Set<string>>()
  for (const file of files) {
    graph.set(file.path, graph.get(file.path) ?? new Set())
    for (const specifier of file.specifiers) {
      if (!specifier.startsWith(".")) continue
      const target = resolveRelative(file.path, specifier)
      if (target !== undefined) addEdge(graph, file.path, target)
    }
  }
  return graph
}

/**
 * Sibling folders: for each pair of folders with the same parent, an edge when a file
 * under the first imports a file under the second.
 */
const folderGraph = (files: ReadonlyArray<SourceFile>): Graph => {
  const graph = new Map<string, Set<string>>()
  for (const [from, targets] of fileGraph(files)) {
    for (const to of targets) {
      const a = from.split("/").slice(0, -1)
      const b = to.split("/").slice(0, -1)
      let shared = 0
      while (shared < a.length && shared < b.length && a[shared] === b[shared]) shared++
      // Siblings only: both files sit below the shared parent in different folders.
      if (shared < a.length && shared < b.length) addEdge(graph, [...a.slice(0, shared + 1)].join("/") + "/", [...b.slice(0, shared + 1)].join("/") + "/")
    }
  }
  return graph
}

/**
 * Folders by their own files: an edge from folder A to folder B when a file directly in A
 * imports a file directly in B (barrels aside: files of imports and re-exports only). Unlike the sibling graph
 * this sees a child folder importing its parent's own files while the parent imports the
 * child, e.g. `pipeline/assemble.ts -> pipeline/stages/x.ts -> pipeline/state.ts`. A
 * folder's `internal/` is part of the folder (its private helpers).
 */
const ownFileFolderGraph = (files: ReadonlyArray<SourceFile>): Graph => {
  // A folder's `internal/` holds the folder's private helpers: its files count as the
  // folder's own, so the folder and its helpers may import each other.
  const folderOf = (path: string): string => {
    const cut = path.lastIndexOf("/")
    const folder = cut < 0 ? "./" : path.slice(0, cut + 1)
    return folder === "internal/" ? "./" : folder.endsWith("/internal/") ? folder.slice(0, -"internal/".length) : folder
  }
  const barrels = new Set(files.filter((f) => f.barrel === true).map((f) => f.path))
  const graph = new Map<string, Set<string>>()
  for (const [from, targets] of fileGraph(files)) {
    if (barrels.has(from)) continue
    for (const to of targets) {
      if (barrels.has(to) || folderOf(from) === folderOf(to)) continue
      addEdge(graph, folderOf(from), folderOf(to))
    }
  }
  return graph
}

/** Imports of other workspace packages, or relative imports out of `src`, that break the package direction. */
const directionViolations = (pkg: string, files: ReadonlyArray<SourceFile>): ReadonlyArray<string> =>
  files.flatMap((file) =>
    file.specifiers.flatMap((specifier) => {
      if (specifier.startsWith(".")) {
        return resolveRelative(file.path, specifier) === undefined ? [`${pkg}/src/${file.path} imports "${specifier}", outside its package's src`] : []
      }
      const match = /^@strata\/([^/]+)/.exec(specifier)
      if (match === null) return []
      const target = match[1]!
      return target === pkg || !(ALLOWED[pkg] ?? []).includes(target)
        ? [`${pkg}/src/${file.path} imports "${specifier}"; ${pkg} may import ${ALLOWED[pkg]?.map((p) => `@strata/${p}`).join(", ") || "no workspace package"}`]
        : []
    })
  )

const PACKAGES = readdirSync(PACKAGES_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && readdirSync(NodePath.join(PACKAGES_DIR, entry.name)).includes("src"))
  .map((entry) => entry.name)
  .sort()

const show = (pkg: string, cycle: ReadonlyArray<string>): string => `${pkg}/src: ${cycle.join(" -> ")}`

describe("architecture", () => {
  it("knows every package's place in the dependency direction", () => {
    expect(PACKAGES.filter((pkg) => ALLOWED[pkg] === undefined)).toEqual([])
  })

  it.each(PACKAGES)("%s: no import cycle between files", (pkg) => {
    expect(cyclesOf(fileGraph(sourcesOf(pkg))).map((c) => show(pkg, c))).toEqual([])
  })

  it.each(PACKAGES)("%s: no import cycle between sibling folders", (pkg) => {
    expect(cyclesOf(folderGraph(sourcesOf(pkg))).map((c) => show(pkg, c))).toEqual([])
  })

  it.each(PACKAGES)("%s: no import cycle between folders, counting each folder's own files", (pkg) => {
    expect(cyclesOf(ownFileFolderGraph(sourcesOf(pkg))).map((c) => show(pkg, c))).toEqual([])
  })

  it.each(PACKAGES)("%s: imports point one way (core <- tiers, symbols, providers, store <- cli)", (pkg) => {
    expect(directionViolations(pkg, sourcesOf(pkg))).toEqual([])
  })

  it("finds the cycles it is meant to find", () => {
    const graph = (edges: Record<string, ReadonlyArray<string>>): Graph => new Map(Object.entries(edges).map(([k, v]) => [k, new Set(v)]))
    expect(cyclesOf(graph({ a: ["b"], b: ["c"], c: ["a"], d: ["a"] }))).toEqual([["a", "b", "c", "a"]])
    expect(cyclesOf(graph({ a: ["a"] }))).toEqual([["a", "a"]])
    expect(cyclesOf(graph({ a: ["b"], b: [] }))).toEqual([])
    const files: ReadonlyArray<SourceFile> = [
      { path: "x/one.ts", specifiers: ["../y/two.ts"] },
      { path: "y/two.ts", specifiers: ["../x/deep/three.ts"] },
      { path: "x/deep/three.ts", specifiers: ["effect"] }
    ]
    expect(cyclesOf(fileGraph(files))).toEqual([])
    expect(cyclesOf(folderGraph(files))).toEqual([["x/", "y/", "x/"]])
    // A child importing its parent's own file while the parent imports the child: no
    // sibling cycle, one own-file cycle; through a barrel index, no cycle.
    const nested: ReadonlyArray<SourceFile> = [
      { path: "p/run.ts", specifiers: ["./stages/a.ts"] },
      { path: "p/stages/a.ts", specifiers: ["../state.ts"] },
      { path: "p/state.ts", specifiers: [] }
    ]
    expect(cyclesOf(folderGraph(nested))).toEqual([])
    expect(cyclesOf(ownFileFolderGraph(nested))).toEqual([["p/", "p/stages/", "p/"]])
    const viaBarrel: ReadonlyArray<SourceFile> = [
      { path: "p/index.ts", specifiers: ["./stages/a.ts"], barrel: true },
      { path: "p/stages/a.ts", specifiers: ["../state.ts"] },
      { path: "p/state.ts", specifiers: [] }
    ]
    expect(cyclesOf(ownFileFolderGraph(viaBarrel))).toEqual([])
    // A folder and its own internal/ import each other freely; another folder's internal/
    // is a folder like any other.
    const withInternal: ReadonlyArray<SourceFile> = [
      { path: "p/run.ts", specifiers: ["./internal/helper.ts"] },
      { path: "p/internal/helper.ts", specifiers: ["../state.ts"] },
      { path: "p/state.ts", specifiers: [] },
      { path: "q/use.ts", specifiers: ["../p/internal/helper.ts"] },
      { path: "p/internal/back.ts", specifiers: ["../../q/use.ts"] }
    ]
    expect(cyclesOf(ownFileFolderGraph(withInternal))).toEqual([["p/", "q/", "p/"]])
    expect(reExportsOnly("import { a } from \"./a.ts\"\nexport * from \"./b.ts\"\nexport { a }")).toBe(false)
    expect(reExportsOnly("export * from \"./b.ts\"\nexport { c } from \"./c.ts\"")).toBe(true)
    expect(specifiersOf("/** import { a } from \"./no.ts\" */\nimport type { B } from \"./b.ts\"\nexport * from \"./c.ts\"\nconst d = import(\"./d.ts\")"))
      .toEqual(["./b.ts", "./c.ts", "./d.ts"])
    expect(directionViolations("tiers", [{ path: "a.ts", specifiers: ["@strata/symbols", "@strata/core/effect", "../../x.ts"] }])).toHaveLength(2)
  })
})
