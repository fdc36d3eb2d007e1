// extractSymbols on small sources: the shapes each language's extractor must read,
// call sites with their callers and lines, and recovery from syntax errors.
import { beforeAll, describe, expect, it } from "vitest"
import { type FileSymbols, type SymbolInfo, Parsers, extractSymbols, languageOf } from "../src/index.ts"

let parsers: Parsers
beforeAll(async () => {
  parsers = await Parsers.load(["typescript", "tsx", "javascript", "python", "go", "rust", "java", "cpp"])
})

const extract = (path: string, source: string): FileSymbols => extractSymbols(parsers, path, source)

/** `kind name(params)->returns [bases]`, members indented: a compact view for assertions. */
const outline = (symbols: ReadonlyArray<SymbolInfo>, depth = 0): Array<string> =>
  symbols.flatMap((s) => [
    `${"  ".repeat(depth)}${s.async ? "async " : ""}${s.kind} ${s.name}${s.params === null ? "" : `(${s.params.map((p) => p.name + (p.optional ? "?" : "")).join(",")})`}${s.returns === "" ? "" : `->${s.returns}`}${s.bases.length === 0 ? "" : ` [${s.bases.join(",")}]`}`,
    ...outline(s.children, depth + 1)
  ])

describe("languageOf", () => {
  it("maps extensions, including declaration files and headers", () => {
    expect(languageOf("a/b.d.ts")).toBe("typescript")
    expect(languageOf("x.tsx")).toBe("tsx")
    expect(languageOf("x.mjs")).toBe("javascript")
    expect(languageOf("x.h")).toBe("c")
    expect(languageOf("x.hpp")).toBe("cpp")
    expect(languageOf("Makefile")).toBeUndefined()
    expect(languageOf(".eslintrc")).toBeUndefined()
    expect(languageOf("README.md")).toBeUndefined()
  })
})

describe("TypeScript", () => {
  it("reads classes, interfaces, functions, parameters and return types", () => {
    const file = extract(
      "a.ts",
      `import { b as c } from "./b"
export default class App<T> extends Base<T> implements I {
  private x = 1
  constructor(readonly svc: Svc, y?: number) { super() }
  get value(): number { return 1 }
  set value(v: number) {}
  async load(id: string, ...rest: unknown[]): Promise<void> { await c(id) }
  handler = (e: Event) => this.load("x")
}
export function overloaded(a: string): string
export function overloaded(a: number): number
export function overloaded(a: unknown) { return a }
export const { p, q } = obj, r = 2
declare module "m" { export function inner(): void }
`
    )
    expect(outline(file.symbols)).toEqual([
      "class App [Base<T>,I]",
      "  field x",
      "  method constructor(svc,y?)",
      "  property value->number",
      "  async method load(id,...rest)->Promise<void>",
      "  method handler(e)",
      "function overloaded(a)->string",
      "variable p",
      "variable q",
      "variable r",
      'namespace "m"',
      "  function inner()->void"
    ])
    expect(file.imports).toEqual([{ module: "./b", names: [{ name: "b", alias: "c" }], line: 1, form: "import" }])
    expect(file.calls).toContainEqual({ name: "c", qualifier: "", line: 7, caller: "App.load" })
    expect(file.calls).toContainEqual({ name: "load", qualifier: "this", line: 8, caller: "App.handler" })
    expect(file.errors).toEqual([])
  })

  it("records require, re-exports and CommonJS exports in JavaScript", () => {
    const file = extract("a.js", `const fs = require("fs")\nexport * from "./all"\nexports.run = async function (x) {}\nA.prototype.m = function () {}\n`)
    expect(file.imports.map((i) => i.module)).toEqual(["fs", "./all"])
    expect(outline(file.symbols)).toEqual(["async function run(x)", "method m()"])
    expect(file.calls).toEqual([])
  })

  it("leaves out an ES module's unexported variables, but not its functions", () => {
    const file = extract("m.ts", `import x from "x"\nconst cache = new Map()\nconst helper = () => cache.get(1)\nexport const PUBLIC = 1\n`)
    expect(outline(file.symbols)).toEqual(["function helper()", "variable PUBLIC"])
    // Outside a module (a script, CommonJS) every top-level variable is kept.
    expect(outline(extract("s.js", `const cache = new Map()\n`).symbols)).toEqual(["variable cache"])
  })

  it("elides long base-class arguments and strips comments from types", () => {
    const file = extract(
      "e.ts",
      `export class E extends Schema.TaggedError<E>()("E", { /** the path */ path: Schema.String, root: Schema.String }) {}\nexport function f(): /* why */ Promise<void> {}\n`
    )
    expect(outline(file.symbols)).toEqual(["class E [Schema.TaggedError<…>]", "function f()->Promise<void>"])
  })

  it("skips intrinsic JSX elements but records components", () => {
    const file = extract("a.tsx", `export const View = () => <div><Card title="x" /></div>\n`)
    expect(file.calls.map((c) => c.name)).toEqual(["Card"])
  })
})

describe("Python", () => {
  it("drops self, keeps staticmethod parameters, marks async and properties", () => {
    const file = extract(
      "m.py",
      `class A(B, metaclass=M):
    x = 1
    def __init__(self, a, b=2):
        self.y = a
    @staticmethod
    def s(a, *args, **kw): pass
    @property
    def p(self) -> int: return 1
    async def go(self): await self.s(1)

if TYPE_CHECKING:
    from x import Y

def f(a: int, /, b: str = "", *, c) -> "List[int]":
    return helper(a)
_private = 1
PUBLIC = 2
`
    )
    expect(outline(file.symbols)).toEqual([
      "class A [B]",
      "  field x",
      "  field y",
      "  method __init__(a,b?)",
      "  method s(a,*args,**kw)",
      "  property p->int",
      "  async method go()",
      "function f(a,b?,c)->List[int]",
      "variable PUBLIC"
    ])
    expect(file.imports.map((i) => i.module)).toEqual(["x"])
    expect(file.calls).toContainEqual({ name: "helper", qualifier: "", line: 15, caller: "f" })
  })
})

describe("Go", () => {
  it("attaches methods to receivers declared in the file", () => {
    const file = extract("a.go", `package a\nimport m "x/y"\ntype T struct{ A int; m.Base }\nfunc (t *T) Get(k string) (int, error) { return m.F(k), nil }\nfunc (o Other) Put() {}\n`)
    expect(outline(file.symbols)).toEqual(["struct T [m.Base]", "  field A", "  method Get(k)->(int,error)", "method Other.Put()"])
    expect(file.imports).toEqual([{ module: "x/y", names: [{ name: "*", alias: "m" }], line: 2, form: "import" }])
    expect(file.calls).toContainEqual({ name: "F", qualifier: "m", line: 4, caller: "T.Get" })
  })
})

describe("Rust", () => {
  it("reads use trees, mod declarations, traits and impl blocks", () => {
    const file = extract(
      "src/lib.rs",
      `mod a;\nuse crate::b::{C, d::E as F};\npub trait T: Clone { fn f(&self) -> u8; }\nimpl T for S { fn f(&self) -> u8 { g(1) } }\npub async fn run(x: u8) {}\n`
    )
    expect(file.imports).toEqual([
      { module: "a", names: [{ name: "*", alias: "a" }], line: 1, form: "mod" },
      { module: "crate::b", names: [{ name: "C", alias: "C" }], line: 2, form: "import" },
      { module: "crate::b::d", names: [{ name: "E", alias: "F" }], line: 2, form: "import" }
    ])
    expect(outline(file.symbols)).toEqual(["interface T [Clone]", "  method f()->u8", "impl T for S", "  method f()->u8", "async function run(x)"])
    expect(file.calls).toContainEqual({ name: "g", qualifier: "", line: 4, caller: "T for S.f" })
  })
})

describe("Java", () => {
  it("reads nested types, constructors and varargs", () => {
    const file = extract("A.java", `import a.b.C;\nclass A extends B implements I { int n; A(int n) {} void m(String... s) { C.of(); } interface J {} }\n`)
    expect(outline(file.symbols)).toEqual(["class A [B,I]", "  field n", "  method A(n)", "  method m(...s)->void", "  interface J"])
    expect(file.calls).toContainEqual({ name: "of", qualifier: "C", line: 2, caller: "A.m" })
  })
})

describe("C and C++", () => {
  it("looks through include guards and reads prototypes, typedefs and pointers", () => {
    const file = extract("v.h", `#ifndef V\n#define V\n#include "w.h"\ntypedef struct v { int n; } v_t;\nchar *name(const v_t *v, int);\nvoid none(void);\n#endif\n`)
    expect(outline(file.symbols)).toEqual(["struct v", "  field n", "type v_t", "function name(v,int)->char*", "function none()->void"])
    expect(file.imports).toEqual([{ module: "w.h", names: [], line: 3, form: "import" }])
  })

  it("attaches out-of-class definitions to their class", () => {
    const file = extract("a.cpp", `class K { public: int f(int a); };\nint K::f(int a) { return g(a); }\n`)
    expect(outline(file.symbols)).toEqual(["class K", "  method f(a)->int"])
    expect(file.calls).toEqual([{ name: "g", qualifier: "", line: 2, caller: "K.f" }])
  })
})

describe("syntax errors", () => {
  it("keeps what tree-sitter recovered and reports where, without throwing", () => {
    const file = extract("broken.ts", `export function ok(a: number) { return a }\nexport class {{{ broken\nexport function alsoOk() {}\n`)
    expect(file.errors.length).toBeGreaterThan(0)
    expect(file.errors[0]!.line).toBeGreaterThan(0)
    expect(file.symbols.map((s) => s.name)).toContain("ok")
  })

  it("handles empty files and binary-looking text", () => {
    expect(extract("e.py", "").symbols).toEqual([])
    expect(() => extract("x.go", "\u0001\u0002package \u0000")).not.toThrow()
  })
})

describe("recovery when the whole file fails to parse", () => {
  // Generic call signatures on consecutive lines (Effect's \`dual\`) defeat this grammar;
  // its error recovery then turns the whole file into one ERROR node.
  const source = `export function before(a: number) { return a }

export const dual: {
  <A extends (...args: Array<any>) => any>(arity: number, body: A): A
  <B extends (...args: Array<any>) => any>(test: (args: IArguments) => boolean, body: B): B
} = function(arity, body) {
  if (typeof arity === "function") {
    return function(this: any) {
      return arity(arguments) ? body.apply(this, arguments as any) : ((self: any) => body(self, ...arguments)) as any
    }
  }
  return body
}

export class After {
  run(x: number) { return before(x) }
}

export const last = (y: string) => y
`

  it("parses one declaration at a time and keeps everything outside the bad one", () => {
    const tree = parsers.parse("typescript", source)!
    expect(tree.rootNode.type).toBe("ERROR")
    tree.delete()
    const file = extract("dual.ts", source)
    expect(file.errors.length).toBeGreaterThan(0)
    expect(outline(file.symbols)).toEqual(expect.arrayContaining(["function before(a)", "class After", "  method run(x)", "function last(y)"]))
    expect(file.symbols.find((s) => s.name === "After")!.line).toBe(15)
    expect(file.calls).toContainEqual({ name: "before", qualifier: "", line: 16, caller: "After.run" })
  })
})

describe("Python class bodies", () => {
  it("reads methods defined under platform guards", () => {
    const file = extract("p.py", `class P:\n    if WINDOWS:\n        def run(self, a): pass\n    else:\n        def run(self, a, b): pass\n        def posix_only(self): pass\n    try:\n        x = 1\n    except E:\n        pass\n`)
    expect(outline(file.symbols)).toEqual(["class P", "  field x", "  method run(a)", "  method posix_only()"])
  })
})
