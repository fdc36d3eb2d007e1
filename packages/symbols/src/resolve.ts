/**
 * Import resolution: maps each import of a file to repository files (or leaves it
 * external) and records which local names it binds, per language: TS/JS relative
 * paths, tsconfig `paths`/`baseUrl` and workspace packages; Python modules and
 * relative imports; Go packages under a `go.mod` module; Rust `mod` and
 * `use crate::/self::/super::`; C/C++ includes; Java imports. Pure over plain data.
 */
import { posix } from "node:path"
import type { FileSymbols, ImportInfo, SymbolInfo } from "./syntax/model.ts"

/** `compilerOptions.paths` of one tsconfig, applying to files under `dir`. */
export interface TsPathConfig {
  /** Directory of the tsconfig ("" for the repository root). */
  readonly dir: string
  /** Repository-relative `baseUrl`, or null. */
  readonly baseUrl: string | null
  /** `[pattern, targets]`, targets already repository-relative. */
  readonly paths: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
}

/** A package of the workspace, so `import "@scope/pkg"` resolves to its source. */
export interface WorkspacePackage {
  readonly name: string
  readonly dir: string
  /** Entry candidates in preference order (repository-relative). */
  readonly entries: ReadonlyArray<string>
}

/** Everything resolution needs to know about the repository besides the files themselves. */
export interface ResolveContext {
  readonly files: ReadonlySet<string>
  /** Files per directory ("" is the root). */
  readonly byDir: ReadonlyMap<string, ReadonlyArray<string>>
  /** Files per basename, for suffix matches (C includes, Java imports). */
  readonly byBase: ReadonlyMap<string, ReadonlyArray<string>>
  readonly tsconfigs: ReadonlyArray<TsPathConfig>
  readonly packages: ReadonlyMap<string, WorkspacePackage>
  /** `go.mod` module paths by directory. */
  readonly goModules: ReadonlyArray<{ readonly dir: string; readonly module: string }>
  /** Directories holding a `Cargo.toml`. */
  readonly cargoDirs: ReadonlyArray<string>
  /** Directories that hold top-level Python packages, plus "" . */
  readonly pythonRoots: ReadonlyArray<string>
}

const dirOf = (path: string): string => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}
const baseOf = (path: string): string => path.slice(path.lastIndexOf("/") + 1)
const join = (...parts: ReadonlyArray<string>): string => {
  const joined = posix.normalize(parts.filter((p) => p !== "").join("/"))
  return joined === "." ? "" : joined.replace(/\/$/, "")
}
const inside = (path: string): boolean => path !== ".." && !path.startsWith("../") && !path.startsWith("/")

/** Strip `//` and block comments and trailing commas: tsconfig files are JSONC. */
export const parseJsonc = (text: string): unknown => {
  let out = ""
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1
      out += text.slice(i, j + 1)
      i = j + 1
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2)
      i = end < 0 ? text.length : end + 2
    } else {
      out += c
      i++
    }
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, "$1"))
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const tsconfigOf = (path: string, read: (path: string) => string | undefined, depth = 0): TsPathConfig | undefined => {
  const text = read(path)
  if (text === undefined || depth > 5) return undefined
  let json: unknown
  try {
    json = parseJsonc(text)
  } catch {
    return undefined
  }
  if (!isRecord(json)) return undefined
  const dir = dirOf(path)
  const options = isRecord(json["compilerOptions"]) ? json["compilerOptions"] : {}
  // A relative `extends` contributes its paths when this file declares none.
  const parentPath = typeof json["extends"] === "string" && json["extends"].startsWith(".") ? join(dir, json["extends"]) : undefined
  const parent = parentPath === undefined ? undefined : tsconfigOf(parentPath.endsWith(".json") ? parentPath : `${parentPath}.json`, read, depth + 1)
  const baseUrl = typeof options["baseUrl"] === "string" ? join(dir, options["baseUrl"]) : (parent?.baseUrl ?? null)
  const pathsBase = baseUrl ?? dir
  const paths = isRecord(options["paths"])
    ? Object.entries(options["paths"]).map(
        ([pattern, targets]) => [pattern, Array.isArray(targets) ? targets.filter((t): t is string => typeof t === "string").map((t) => join(pathsBase, t)) : []] as const
      )
    : (parent?.paths ?? [])
  if (baseUrl === null && paths.length === 0) return undefined
  return { dir, baseUrl, paths }
}

const stringLeaves = (value: unknown, out: Array<string>): Array<string> => {
  if (typeof value === "string") out.push(value)
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out)
  else if (isRecord(value)) for (const v of Object.values(value)) stringLeaves(v, out)
  return out
}

const packageOf = (path: string, read: (path: string) => string | undefined): WorkspacePackage | undefined => {
  const text = read(path)
  if (text === undefined) return undefined
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isRecord(json) || typeof json["name"] !== "string") return undefined
  const dir = dirOf(path)
  const exports = json["exports"]
  const root = isRecord(exports) && "." in exports ? exports["."] : typeof exports === "string" ? exports : undefined
  const declared = [...stringLeaves(root, []), ...["source", "types", "module", "main"].map((k) => json[k]).filter((v): v is string => typeof v === "string")]
  const entries = [...declared, "src/index", "index"].map((e) => join(dir, e))
  return { name: json["name"], dir, entries }
}

/**
 * Build the resolution context from the repository's file list; `read` returns a
 * config file's text (tsconfig.json, package.json, go.mod) or undefined.
 *
 * @example
 * ```ts
 * import { buildResolveContext } from "@strata/symbols"
 * const ctx = buildResolveContext(["src/a.ts", "src/b.ts"], () => undefined)
 * ```
 */
export const buildResolveContext = (files: ReadonlyArray<string>, read: (path: string) => string | undefined): ResolveContext => {
  const byDir = new Map<string, Array<string>>()
  const byBase = new Map<string, Array<string>>()
  const tsconfigs: Array<TsPathConfig> = []
  const packages = new Map<string, WorkspacePackage>()
  const goModules: Array<{ dir: string; module: string }> = []
  const cargoDirs: Array<string> = []
  const initDirs = new Set<string>()
  for (const file of files) {
    const dir = dirOf(file)
    const base = baseOf(file)
    const inDir = byDir.get(dir)
    if (inDir === undefined) byDir.set(dir, [file])
    else inDir.push(file)
    const sameBase = byBase.get(base)
    if (sameBase === undefined) byBase.set(base, [file])
    else sameBase.push(file)
    if (file.includes("node_modules/")) continue
    if (base === "tsconfig.json" || base === "jsconfig.json") {
      const config = tsconfigOf(file, read)
      if (config !== undefined) tsconfigs.push(config)
    } else if (base === "package.json") {
      const pkg = packageOf(file, read)
      if (pkg !== undefined && !packages.has(pkg.name)) packages.set(pkg.name, pkg)
    } else if (base === "go.mod") {
      const module = /^\s*module\s+(\S+)/m.exec(read(file) ?? "")?.[1]
      if (module !== undefined) goModules.push({ dir, module: module.replace(/^"|"$/g, "") })
    } else if (base === "Cargo.toml") {
      cargoDirs.push(dir)
    } else if (base === "__init__.py") {
      initDirs.add(dir)
    }
  }
  const pythonRoots = new Set<string>([""])
  for (const dir of initDirs) if (!initDirs.has(dirOf(dir))) pythonRoots.add(dirOf(dir))
  // Nearest config first: deeper directories sort before their ancestors.
  tsconfigs.sort((a, b) => b.dir.length - a.dir.length || (a.dir < b.dir ? -1 : 1))
  goModules.sort((a, b) => b.module.length - a.module.length)
  cargoDirs.sort((a, b) => b.length - a.length)
  return {
    files: new Set(files),
    byDir,
    byBase,
    tsconfigs,
    packages,
    goModules,
    cargoDirs,
    pythonRoots: [...pythonRoots].sort()
  }
}

/** What a local name refers to after resolution. */
export interface Binding {
  /** Files the name refers into (several for a Go package or a Java wildcard). */
  readonly files: ReadonlyArray<string>
  /** The symbol's name in the target ("*" for a whole module or package). */
  readonly symbol: string
}

/** The resolved imports of one file. */
export interface ResolvedImports {
  /** Repository targets in source order, deduped: file paths, or `dir/` for a Go package. */
  readonly local: ReadonlyArray<string>
  /** Unresolved specifiers in source order, deduped. */
  readonly external: ReadonlyArray<string>
  /** Files each import statement resolved to (one edge each). */
  readonly edges: ReadonlyArray<string>
  /** Local names bound by imports. */
  readonly bindings: ReadonlyMap<string, Binding>
  /** Files whose top-level names are all visible here (`import *`, includes). */
  readonly wildcards: ReadonlyArray<string>
}

const TS_EXTENSIONS = [".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"]
const JS_TO_TS: Readonly<Record<string, ReadonlyArray<string>>> = {
  ".js": [".ts", ".tsx", ".d.ts"],
  ".jsx": [".tsx"],
  ".mjs": [".mts", ".d.mts"],
  ".cjs": [".cts", ".d.cts"]
}

const tsCandidates = (ctx: ResolveContext, base: string): string | undefined => {
  if (base === "" || !inside(base)) return undefined
  if (ctx.files.has(base)) return base
  const ext = /\.[cm]?jsx?$/.exec(base)?.[0]
  if (ext !== undefined) {
    const stem = base.slice(0, -ext.length)
    for (const replacement of JS_TO_TS[ext] ?? []) if (ctx.files.has(stem + replacement)) return stem + replacement
  }
  for (const e of TS_EXTENSIONS) if (ctx.files.has(base + e)) return base + e
  for (const e of TS_EXTENSIONS) if (ctx.files.has(`${base}/index${e}`)) return `${base}/index${e}`
  return undefined
}

const resolveTs = (ctx: ResolveContext, from: string, spec: string): string | undefined => {
  if (spec.startsWith("./") || spec.startsWith("../") || spec === "." || spec === "..") return tsCandidates(ctx, join(dirOf(from), spec))
  if (spec.startsWith("/")) return undefined
  for (const config of ctx.tsconfigs) {
    if (config.dir !== "" && from !== config.dir && !from.startsWith(`${config.dir}/`)) continue
    for (const [pattern, targets] of config.paths) {
      const star = pattern.indexOf("*")
      let matched: string | undefined
      if (star < 0) matched = pattern === spec ? "" : undefined
      else if (spec.startsWith(pattern.slice(0, star)) && spec.endsWith(pattern.slice(star + 1)) && spec.length >= pattern.length - 1) {
        matched = spec.slice(star, spec.length - (pattern.length - star - 1))
      }
      if (matched === undefined) continue
      for (const target of targets) {
        const hit = tsCandidates(ctx, target.replace("*", matched))
        if (hit !== undefined) return hit
      }
    }
    if (config.baseUrl !== null) {
      const hit = tsCandidates(ctx, join(config.baseUrl, spec))
      if (hit !== undefined) return hit
    }
    break
  }
  // A workspace package imported by name resolves to its source entry.
  const parts = spec.split("/")
  const name = spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!
  const pkg = ctx.packages.get(name)
  if (pkg === undefined) return undefined
  const sub = spec.slice(name.length + 1)
  if (sub === "") {
    for (const entry of pkg.entries) {
      const hit = tsCandidates(ctx, entry)
      if (hit !== undefined) return hit
    }
    return undefined
  }
  return tsCandidates(ctx, join(pkg.dir, "src", sub)) ?? tsCandidates(ctx, join(pkg.dir, sub))
}

const pythonModule = (ctx: ResolveContext, base: string): string | undefined => {
  if (!inside(base)) return undefined
  if (base !== "" && ctx.files.has(`${base}.py`)) return `${base}.py`
  if (base !== "" && ctx.files.has(`${base}.pyi`)) return `${base}.pyi`
  const init = base === "" ? "__init__.py" : `${base}/__init__.py`
  return ctx.files.has(init) ? init : undefined
}

/** Python: the module file and, per imported name that is itself a module, its file. */
const resolvePython = (ctx: ResolveContext, from: string, imp: ImportInfo): { module: string | undefined; submodules: Map<string, string> } => {
  const dots = /^\.*/.exec(imp.module)?.[0].length ?? 0
  const rest = imp.module.slice(dots).replace(/\./g, "/")
  const bases: Array<string> = []
  if (dots > 0) {
    let dir = dirOf(from)
    for (let i = 1; i < dots; i++) dir = dir === "" ? ".." : dirOf(dir)
    bases.push(join(dir, rest))
  } else {
    for (const root of [dirOf(from), ...ctx.pythonRoots, "src", "lib"]) bases.push(join(root, rest))
  }
  for (const base of bases) {
    const module = dots > 0 && rest === "" ? pythonModule(ctx, base) : rest === "" ? undefined : pythonModule(ctx, base)
    const submodules = new Map<string, string>()
    for (const n of imp.names) {
      if (n.name === "*") continue
      const sub = pythonModule(ctx, join(base, n.name.replace(/\./g, "/")))
      if (sub !== undefined && !(sub.endsWith("__init__.py") && dirOf(sub) === base)) submodules.set(n.alias, sub)
    }
    if (module !== undefined || submodules.size > 0) return { module, submodules }
  }
  return { module: undefined, submodules: new Map() }
}

const resolveGo = (ctx: ResolveContext, spec: string): { dir: string; files: ReadonlyArray<string> } | undefined => {
  for (const { dir, module } of ctx.goModules) {
    if (spec !== module && !spec.startsWith(`${module}/`)) continue
    const pkgDir = join(dir, spec.slice(module.length + 1))
    const files = (ctx.byDir.get(pkgDir) ?? []).filter((f) => f.endsWith(".go"))
    return files.length === 0 ? undefined : { dir: pkgDir, files }
  }
  return undefined
}

const rustFileOfDir = (ctx: ResolveContext, dir: string): string | undefined => {
  for (const root of ["lib.rs", "main.rs"]) if (ctx.files.has(join(dir, root)) && baseOf(dir) === "src") return join(dir, root)
  if (ctx.files.has(`${dir}.rs`)) return `${dir}.rs`
  if (ctx.files.has(`${dir}/mod.rs`)) return `${dir}/mod.rs`
  for (const root of ["lib.rs", "main.rs"]) if (ctx.files.has(join(dir, root))) return join(dir, root)
  return undefined
}

/** The directory holding a Rust file's child modules. */
const rustChildDir = (file: string): string => {
  const base = baseOf(file)
  if (base === "mod.rs" || base === "lib.rs" || base === "main.rs") return dirOf(file)
  return join(dirOf(file), base.replace(/\.rs$/, ""))
}

const rustCrateDir = (ctx: ResolveContext, from: string): string => {
  const cargo = ctx.cargoDirs.find((d) => d === "" || from.startsWith(`${d}/`))
  if (cargo !== undefined) return join(cargo, "src")
  // No Cargo.toml: the nearest ancestor holding lib.rs or main.rs is the crate root.
  let dir = dirOf(from)
  while (true) {
    if (ctx.files.has(join(dir, "lib.rs")) || ctx.files.has(join(dir, "main.rs"))) return dir
    if (dir === "") return dirOf(from)
    dir = dirOf(dir)
  }
}

/** Walk `segments` from module directory `dir`; the deepest module file reached, and what is left. */
const rustWalk = (ctx: ResolveContext, dir: string, segments: ReadonlyArray<string>): { file: string | undefined; rest: ReadonlyArray<string> } => {
  let file = rustFileOfDir(ctx, dir)
  let current = dir
  let i = 0
  for (; i < segments.length; i++) {
    const next = join(current, segments[i]!)
    const hit = rustFileOfDir(ctx, next)
    if (hit === undefined) break
    file = hit
    current = next
  }
  return { file, rest: segments.slice(i) }
}

/** Resolve a Rust path (`crate::a::b`, `super::x`, `self::y`, `a::b`) to a module file. */
const resolveRustPath = (ctx: ResolveContext, from: string, path: string): { file: string | undefined; rest: ReadonlyArray<string> } => {
  const segments = path.split("::").filter((s) => s !== "")
  if (segments.length === 0) return { file: undefined, rest: [] }
  let dir: string
  let i = 0
  if (segments[0] === "crate") {
    dir = rustCrateDir(ctx, from)
    i = 1
  } else if (segments[0] === "self" || segments[0] === "super") {
    dir = rustChildDir(from)
    while (segments[i] === "self" || segments[i] === "super") {
      if (segments[i] === "super") dir = dirOf(dir)
      i++
    }
  } else {
    // Edition 2018: `use a::b` names a child module when `a` is declared here.
    dir = rustChildDir(from)
    const walked = rustWalk(ctx, dir, segments)
    return walked.rest.length < segments.length ? walked : { file: undefined, rest: segments }
  }
  return rustWalk(ctx, dir, segments.slice(i))
}

const resolveInclude = (ctx: ResolveContext, from: string, spec: string, system: boolean): string | undefined => {
  const candidates = system ? [spec] : [join(dirOf(from), spec), spec]
  for (const c of candidates) if (inside(c) && ctx.files.has(c)) return c
  // `#include "lib/x.h"` compiled with -I: the shortest repository path ending in it.
  const matches = (ctx.byBase.get(baseOf(spec)) ?? []).filter((f) => f === spec || f.endsWith(`/${spec}`))
  if (matches.length === 0 || (system && !spec.includes("/") && matches.length > 1)) return undefined
  return [...matches].sort((a, b) => a.length - b.length || (a < b ? -1 : 1))[0]
}

const resolveJava = (ctx: ResolveContext, spec: string): { files: ReadonlyArray<string>; wildcard: boolean } | undefined => {
  const wildcard = spec.endsWith(".*")
  const parts = (wildcard ? spec.slice(0, -2) : spec).split(".")
  const suffixMatch = (path: string): ReadonlyArray<string> => (ctx.byBase.get(baseOf(path)) ?? []).filter((f) => f === path || f.endsWith(`/${path}`))
  // `a.b.C`, or `a.b.C.member` for a static import.
  for (let n = parts.length; n >= Math.max(1, parts.length - 1); n--) {
    const hits = suffixMatch(`${parts.slice(0, n).join("/")}.java`)
    if (hits.length > 0) return { files: hits.slice(0, 1), wildcard: wildcard || n < parts.length }
  }
  if (wildcard) {
    const dir = parts.join("/")
    for (const [d, files] of ctx.byDir) {
      if (d === dir || d.endsWith(`/${dir}`)) {
        const java = files.filter((f) => f.endsWith(".java"))
        if (java.length > 0) return { files: java, wildcard: true }
      }
    }
  }
  return undefined
}

/** Where one file's resolved imports accumulate, in source order. */
interface ImportSink {
  readonly local: Array<string>
  readonly external: Array<string>
  readonly edges: Array<string>
  readonly bindings: Map<string, Binding>
  readonly wildcards: Array<string>
}

const addLocal = (sink: ImportSink, target: string): void => {
  if (!sink.local.includes(target)) sink.local.push(target)
}

const addExternal = (sink: ImportSink, spec: string): void => {
  if (spec !== "" && !sink.external.includes(spec)) sink.external.push(spec)
}

const bindNames = (sink: ImportSink, imp: ImportInfo, files: ReadonlyArray<string>): void => {
  for (const n of imp.names) {
    if (n.name === "*" && n.alias === "*") sink.wildcards.push(...files)
    else sink.bindings.set(n.alias, { files, symbol: n.name })
  }
}

/** One import of one file into the sink: a repository target (with edges and bindings) or an external specifier. */
type ImportResolver = (sink: ImportSink, ctx: ResolveContext, file: FileSymbols, imp: ImportInfo) => void

const tsImport: ImportResolver = (sink, ctx, file, imp) => {
  const target = resolveTs(ctx, file.path, imp.module)
  if (target === undefined || target === file.path) return addExternal(sink, imp.module)
  addLocal(sink, target)
  sink.edges.push(target)
  bindNames(sink, imp, [target])
}

const pythonImport: ImportResolver = (sink, ctx, file, imp) => {
  const { module, submodules } = resolvePython(ctx, file.path, imp)
  if (module === undefined && submodules.size === 0) return addExternal(sink, imp.module)
  if (module !== undefined && module !== file.path) {
    addLocal(sink, module)
    sink.edges.push(module)
    bindNames(sink, { ...imp, names: imp.names.filter((n) => !submodules.has(n.alias)) }, [module])
  }
  for (const [alias, sub] of submodules) {
    if (sub === file.path) continue
    addLocal(sink, sub)
    sink.edges.push(sub)
    sink.bindings.set(alias, { files: [sub], symbol: "*" })
  }
}

const goImport: ImportResolver = (sink, ctx, _file, imp) => {
  const pkg = resolveGo(ctx, imp.module)
  if (pkg === undefined) return addExternal(sink, imp.module)
  // Package files get edges from the references into them, not from the import.
  addLocal(sink, `${pkg.dir}/`)
  bindNames(sink, imp, pkg.files)
}

const rustImport: ImportResolver = (sink, ctx, file, imp) => {
  if (imp.form === "mod") {
    const target = rustFileOfDir(ctx, join(rustChildDir(file.path), imp.module))
    if (target === undefined) return
    addLocal(sink, target)
    sink.edges.push(target)
    bindNames(sink, imp, [target])
    return
  }
  const { file: target, rest } = resolveRustPath(ctx, file.path, imp.module)
  if (target === undefined) return addExternal(sink, imp.module.split("::")[0] ?? imp.module)
  // Imported names may themselves be modules (`use crate::a::{b}` with a/b.rs).
  for (const n of imp.names) {
    const sub = rest.length === 0 && n.name !== "*" && n.name !== "self" ? rustFileOfDir(ctx, join(rustChildDir(target), n.name)) : undefined
    const into = sub ?? target
    if (into === file.path) continue
    addLocal(sink, into)
    sink.edges.push(into)
    if (n.name === "*") sink.wildcards.push(into)
    else sink.bindings.set(n.alias, { files: [into], symbol: sub !== undefined ? "*" : (rest.length > 0 ? rest[rest.length - 1]! : n.name) })
  }
}

const includeImport: ImportResolver = (sink, ctx, file, imp) => {
  const target = resolveInclude(ctx, file.path, imp.module, imp.form === "system-include")
  if (target === undefined || target === file.path) return addExternal(sink, imp.module)
  addLocal(sink, target)
  sink.edges.push(target)
  sink.wildcards.push(target)
}

const javaImport: ImportResolver = (sink, ctx, file, imp) => {
  const hit = resolveJava(ctx, imp.module)
  if (hit === undefined) return addExternal(sink, imp.module)
  for (const f of hit.files) if (f !== file.path) addLocal(sink, f)
  if (!hit.wildcard) sink.edges.push(...hit.files.filter((f) => f !== file.path))
  if (hit.wildcard) sink.wildcards.push(...hit.files.filter((f) => f !== file.path))
  else for (const n of imp.names) sink.bindings.set(n.alias, { files: hit.files, symbol: n.name })
}

const IMPORT_RESOLVERS: Readonly<Record<FileSymbols["language"], ImportResolver>> = {
  typescript: tsImport,
  tsx: tsImport,
  javascript: tsImport,
  python: pythonImport,
  go: goImport,
  rust: rustImport,
  c: includeImport,
  cpp: includeImport,
  java: javaImport
}

/**
 * Resolve the imports of one file against the repository.
 *
 * @example
 * ```ts
 * import { buildResolveContext, resolveImports } from "@strata/symbols"
 * const ctx = buildResolveContext(["src/a.ts", "src/b.ts"], () => undefined)
 * const file = { path: "src/a.ts", language: "typescript", symbols: [], calls: [], errors: [],
 *   imports: [{ module: "./b.js", names: [{ name: "f", alias: "f" }], line: 1, form: "import" }] } as const
 * resolveImports(file, ctx).local // ["src/b.ts"]
 * ```
 */
export const resolveImports = (file: FileSymbols, ctx: ResolveContext): ResolvedImports => {
  const sink: ImportSink = { local: [], external: [], edges: [], bindings: new Map(), wildcards: [] }
  const resolver = IMPORT_RESOLVERS[file.language]
  for (const imp of file.imports) resolver(sink, ctx, file, imp)
  return sink
}

/** Top-level names a file defines (namespace members included), for call resolution. */
export const definedNames = (symbols: ReadonlyArray<SymbolInfo>): ReadonlySet<string> => {
  const names = new Set<string>()
  const visit = (list: ReadonlyArray<SymbolInfo>): void => {
    for (const s of list) {
      if (s.kind === "namespace") visit(s.children)
      if (s.kind === "impl") continue
      names.add(s.name)
    }
  }
  visit(symbols)
  return names
}

const TYPE_KINDS = new Set(["class", "struct", "interface", "enum", "namespace", "impl", "type"])

/** Names of the file's classes, structs, interfaces, enums and namespaces (namespace members too). */
const typeNames = (symbols: ReadonlyArray<SymbolInfo>, out = new Set<string>()): Set<string> => {
  for (const s of symbols) {
    if (TYPE_KINDS.has(s.kind)) out.add(s.name)
    if (s.kind === "namespace") typeNames(s.children, out)
  }
  return out
}

const memberNames = (symbols: ReadonlyArray<SymbolInfo>, out = new Set<string>()): Set<string> => {
  for (const s of symbols) {
    for (const c of s.children) if (c.kind === "method" || c.kind === "function") out.add(c.name)
    memberNames(s.children, out)
  }
  return out
}

/** A call site resolved to a symbol of a repository file (possibly the calling file). */
export interface ResolvedCall {
  readonly name: string
  readonly caller: string
  readonly line: number
  readonly file: string
  /** The target symbol's name, or "" when only the file is known. */
  readonly symbol: string
}

const pickDefining = (files: ReadonlyArray<string>, name: string, defs: (file: string) => ReadonlySet<string> | undefined): string | undefined => {
  for (const f of files) if (defs(f)?.has(name) === true) return f
  return undefined
}

/**
 * Resolve call sites: through import bindings, names the file defines itself,
 * wildcard imports and includes, the same Go package or Java directory, and Rust
 * paths. Unresolved calls are dropped.
 */
export const resolveCalls = (
  file: FileSymbols,
  imports: ResolvedImports,
  ctx: ResolveContext,
  defs: (file: string) => ReadonlySet<string> | undefined
): Array<ResolvedCall> => {
  const out: Array<ResolvedCall> = []
  const own = defs(file.path) ?? new Set<string>()
  const ownTypes = typeNames(file.symbols)
  // Java and C++ call their own class's methods without a receiver.
  const members = file.language === "java" || file.language === "cpp" || file.language === "c" ? memberNames(file.symbols) : new Set<string>()
  const siblings =
    file.language === "go"
      ? (ctx.byDir.get(dirOf(file.path)) ?? []).filter((f) => f.endsWith(".go") && f !== file.path)
      : file.language === "java"
        ? (ctx.byDir.get(dirOf(file.path)) ?? []).filter((f) => f.endsWith(".java") && f !== file.path)
        : []
  for (const call of file.calls) {
    const push = (target: string, symbol: string): void => {
      out.push({ name: call.name, caller: call.caller, line: call.line, file: target, symbol })
    }
    if (call.qualifier !== "") {
      const segments = call.qualifier.split(/::|\./)
      const head = segments[0]!
      const last = segments[segments.length - 1]!
      const binding = imports.bindings.get(call.qualifier) ?? imports.bindings.get(head)
      if (binding !== undefined && (binding.symbol === "*" || binding.symbol === "default")) {
        const target = pickDefining(binding.files, call.name, defs)
        if (target !== undefined) push(target, call.name)
        else if (binding.files.length === 1) push(binding.files[0]!, "")
        continue
      }
      if (binding !== undefined) {
        push(binding.files[0]!, binding.symbol)
        continue
      }
      // `User.parse()` on a class of this file, or `Circle::unit()` on a class an include declares.
      // (Not `cache.get()` on a variable of this file: that calls into the variable's type.)
      if (ownTypes.has(last)) {
        push(file.path, last)
        continue
      }
      const declaring = pickDefining(imports.wildcards, last, defs)
      if (declaring !== undefined) {
        push(declaring, last)
        continue
      }
      if (ownTypes.has(head)) {
        push(file.path, head)
        continue
      }
      if (file.language === "rust" && call.qualifier.includes("::")) {
        const { file: target } = resolveRustPath(ctx, file.path, call.qualifier)
        if (target !== undefined && target !== file.path) push(target, defs(target)?.has(call.name) === true ? call.name : "")
        continue
      }
      if (file.language === "java" && own.has(call.qualifier) === false) {
        const target = siblings.find((f) => baseOf(f) === `${call.qualifier}.java`)
        if (target !== undefined) push(target, call.qualifier)
      }
      continue
    }
    const binding = imports.bindings.get(call.name)
    if (binding !== undefined) {
      const symbol = binding.symbol === "*" || binding.symbol === "default" ? "" : binding.symbol
      push(binding.files[0]!, symbol)
      continue
    }
    if (own.has(call.name) || members.has(call.name)) {
      push(file.path, call.name)
      continue
    }
    const target = pickDefining(imports.wildcards, call.name, defs) ?? pickDefining(siblings, call.name, defs)
    if (target !== undefined) push(target, call.name)
  }
  return out
}
