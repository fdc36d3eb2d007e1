// Import resolution per language, over plain file lists and config texts.
import { describe, expect, it } from "vitest"
import { type FileSymbols, type ImportInfo, type Language, buildResolveContext, resolveImports } from "../src/index.ts"
import { parseJsonc, resolveCalls } from "../src/resolve.ts"

const file = (path: string, language: Language, imports: ReadonlyArray<Partial<ImportInfo> & { module: string }>): FileSymbols => ({
  path,
  language,
  imports: imports.map((i) => ({ names: [], line: 1, form: "import" as const, ...i })),
  symbols: [],
  calls: [],
  errors: []
})

const ctxOf = (files: ReadonlyArray<string>, configs: Readonly<Record<string, string>> = {}) => buildResolveContext(files, (p) => configs[p])

describe("TypeScript and JavaScript", () => {
  const ctx = ctxOf(
    ["src/a.ts", "src/b.ts", "src/dir/index.tsx", "src/legacy.js", "lib/x.d.ts", "packages/core/package.json", "packages/core/src/index.ts", "packages/core/src/sub.ts", "tsconfig.json"],
    {
      "tsconfig.json": `{ "compilerOptions": { /* aliases */ "baseUrl": ".", "paths": { "@lib/*": ["lib/*"], "~": ["src/a.ts"] } } }`,
      "packages/core/package.json": JSON.stringify({ name: "@acme/core", exports: { ".": { "@acme/source": "./src/index.ts", default: "./dist/index.js" } } })
    }
  )
  const resolve = (spec: string, from = "src/a.ts") => resolveImports(file(from, "typescript", [{ module: spec }]), ctx)

  it("resolves relative paths with extensions, .js to .ts, and index files", () => {
    expect(resolve("./b").local).toEqual(["src/b.ts"])
    expect(resolve("./b.js").local).toEqual(["src/b.ts"])
    expect(resolve("./dir").local).toEqual(["src/dir/index.tsx"])
    expect(resolve("./legacy.js").local).toEqual(["src/legacy.js"])
    expect(resolve("../lib/x").local).toEqual(["lib/x.d.ts"])
  })

  it("resolves tsconfig paths and baseUrl", () => {
    expect(resolve("@lib/x").local).toEqual(["lib/x.d.ts"])
    expect(resolve("~", "src/b.ts").local).toEqual(["src/a.ts"])
    expect(resolve("src/b").local).toEqual(["src/b.ts"])
  })

  it("resolves workspace packages to their source", () => {
    expect(resolve("@acme/core").local).toEqual(["packages/core/src/index.ts"])
    expect(resolve("@acme/core/sub").local).toEqual(["packages/core/src/sub.ts"])
  })

  it("leaves everything else external, deduped", () => {
    const r = resolveImports(file("src/a.ts", "typescript", [{ module: "react" }, { module: "./missing" }, { module: "react" }]), ctx)
    expect(r).toMatchObject({ local: [], external: ["react", "./missing"], edges: [] })
  })

  it("binds named, default and namespace imports", () => {
    const r = resolveImports(
      file("src/a.ts", "typescript", [
        {
          module: "./b",
          names: [
            { name: "f", alias: "g" },
            { name: "*", alias: "B" },
            { name: "default", alias: "d" }
          ]
        }
      ]),
      ctx
    )
    expect([...r.bindings]).toEqual([
      ["g", { files: ["src/b.ts"], symbol: "f" }],
      ["B", { files: ["src/b.ts"], symbol: "*" }],
      ["d", { files: ["src/b.ts"], symbol: "default" }]
    ])
  })

  it("parses tsconfig JSONC: comments, trailing commas, comment markers inside strings", () => {
    expect(parseJsonc(`{ "a": "http://x", // c\n "b": [1, 2,], /* d */ }`)).toEqual({ a: "http://x", b: [1, 2] })
  })
})

describe("Python", () => {
  const ctx = ctxOf(["app/__init__.py", "app/models.py", "app/sub/__init__.py", "app/sub/deep.py", "src/lib/__init__.py", "src/lib/util.py", "scripts/run.py", "scripts/helpers.py"])
  const resolve = (from: string, module: string, names: ReadonlyArray<string> = []) =>
    resolveImports(file(from, "python", [{ module, names: names.map((n) => ({ name: n, alias: n })) }]), ctx)

  it("resolves absolute modules and packages, also under src/ roots and next to scripts", () => {
    expect(resolve("x.py", "app.models").local).toEqual(["app/models.py"])
    expect(resolve("x.py", "app.sub").local).toEqual(["app/sub/__init__.py"])
    expect(resolve("x.py", "lib.util").local).toEqual(["src/lib/util.py"])
    expect(resolve("scripts/run.py", "helpers").local).toEqual(["scripts/helpers.py"])
  })

  it("resolves relative imports by level, and imported submodules", () => {
    expect(resolve("app/sub/deep.py", "..models").local).toEqual(["app/models.py"])
    expect(resolve("app/models.py", ".", ["sub"]).local).toEqual(["app/__init__.py", "app/sub/__init__.py"])
    expect(resolve("app/sub/__init__.py", ".deep").local).toEqual(["app/sub/deep.py"])
  })

  it("leaves the standard library external", () => {
    expect(resolve("x.py", "os.path").external).toEqual(["os.path"])
  })
})

describe("Go", () => {
  const ctx = ctxOf(["cmd/main.go", "go.mod", "internal/store/a.go", "internal/store/a_test.go", "internal/store/b.go"], { "go.mod": "module example.com/app\n\ngo 1.22\n" })

  it("maps import paths under the module to package directories", () => {
    const r = resolveImports(file("cmd/main.go", "go", [{ module: "example.com/app/internal/store", names: [{ name: "*", alias: "store" }] }, { module: "fmt" }]), ctx)
    expect(r.local).toEqual(["internal/store/"])
    expect(r.external).toEqual(["fmt"])
    expect(r.bindings.get("store")?.files).toEqual(["internal/store/a.go", "internal/store/a_test.go", "internal/store/b.go"])
  })
})

describe("Rust", () => {
  const ctx = ctxOf(["Cargo.toml", "src/lib.rs", "src/net.rs", "src/net/http.rs", "src/util/mod.rs", "src/util/fmt.rs"])

  it("resolves mod declarations beside the declaring file", () => {
    expect(resolveImports(file("src/lib.rs", "rust", [{ module: "net", form: "mod" }, { module: "util", form: "mod" }]), ctx).local).toEqual(["src/net.rs", "src/util/mod.rs"])
    expect(resolveImports(file("src/net.rs", "rust", [{ module: "http", form: "mod" }]), ctx).local).toEqual(["src/net/http.rs"])
  })

  it("resolves use crate::, super:: and self:: paths, and modules named in a use list", () => {
    const names = (n: string) => [{ name: n, alias: n }]
    expect(resolveImports(file("src/util/fmt.rs", "rust", [{ module: "crate::net::http", names: names("Client") }]), ctx).local).toEqual(["src/net/http.rs"])
    expect(resolveImports(file("src/net/http.rs", "rust", [{ module: "super", names: names("Conn") }]), ctx).local).toEqual(["src/net.rs"])
    expect(resolveImports(file("src/util/mod.rs", "rust", [{ module: "self", names: names("fmt") }]), ctx).local).toEqual(["src/util/fmt.rs"])
    expect(resolveImports(file("src/lib.rs", "rust", [{ module: "std::io", names: names("Read") }]), ctx).external).toEqual(["std"])
  })
})

describe("C and C++", () => {
  const ctx = ctxOf(["include/lib/vec.h", "src/vec.c", "src/local.h", "stdio_shim/stdio.h"])

  it("resolves includes relative to the file, the root, or by unique suffix", () => {
    const r = resolveImports(
      file("src/vec.c", "c", [{ module: "local.h" }, { module: "lib/vec.h" }, { module: "stdio.h", form: "system-include" }, { module: "missing.h" }]),
      ctx
    )
    expect(r.local).toEqual(["src/local.h", "include/lib/vec.h", "stdio_shim/stdio.h"])
    expect(r.external).toEqual(["missing.h"])
    expect(r.wildcards).toEqual(r.local)
  })
})

describe("Java", () => {
  const ctx = ctxOf(["src/main/java/com/acme/model/Point.java", "src/main/java/com/acme/model/Shape.java", "src/main/java/com/acme/App.java"])

  it("resolves class imports by package path, wildcards to the package's files", () => {
    const r = resolveImports(
      file("src/main/java/com/acme/App.java", "java", [
        { module: "com.acme.model.Point", names: [{ name: "Point", alias: "Point" }] },
        { module: "com.acme.model.*", names: [{ name: "*", alias: "*" }] },
        { module: "java.util.List", names: [{ name: "List", alias: "List" }] }
      ]),
      ctx
    )
    expect(r.local).toEqual(["src/main/java/com/acme/model/Point.java", "src/main/java/com/acme/model/Shape.java"])
    expect(r.external).toEqual(["java.util.List"])
    expect(r.bindings.get("Point")).toEqual({ files: ["src/main/java/com/acme/model/Point.java"], symbol: "Point" })
  })
})

describe("calls", () => {
  it("resolve through bindings, namespaces, own definitions and wildcards; the rest are dropped", () => {
    const ctx = ctxOf(["a.ts", "b.ts", "c.ts"])
    const a: FileSymbols = {
      ...file("a.ts", "typescript", [
        { module: "./b", names: [{ name: "f", alias: "g" }] },
        { module: "./c", names: [{ name: "*", alias: "C" }] }
      ]),
      symbols: [{ kind: "function", name: "local", async: false, params: [], returns: "", bases: [], children: [], line: 1, endLine: 1 }],
      calls: [
        { name: "g", qualifier: "", line: 2, caller: "x" },
        { name: "h", qualifier: "C", line: 3, caller: "x" },
        { name: "local", qualifier: "", line: 4, caller: "x" },
        { name: "log", qualifier: "console", line: 5, caller: "x" }
      ]
    }
    const defs = new Map([
      ["a.ts", new Set(["local"])],
      ["b.ts", new Set(["f"])],
      ["c.ts", new Set(["h"])]
    ])
    const calls = resolveCalls(a, resolveImports(a, ctx), ctx, (p) => defs.get(p))
    expect(calls.map((c) => [c.name, c.file, c.symbol])).toEqual([
      ["g", "b.ts", "f"],
      ["h", "c.ts", "h"],
      ["local", "a.ts", "local"]
    ])
  })
})
