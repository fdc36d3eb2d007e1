// Per language: a fixture repository (packages/symbols/fixtures/<language>) with known
// symbols, and the exact block each key file renders to, counts and resolution included.
import { describe, expect, it } from "vitest"
import { indexFixture } from "./helpers.ts"

const block = (...lines: ReadonlyArray<string>): string => `${lines.join("\n")}\n`

const CASES: ReadonlyArray<readonly [string, string, ReadonlyArray<readonly [string, string]>]> = [
  [
    "ts",
    "TypeScript, TSX and JavaScript",
    [
      [
        "src/api.ts",
        block(
          "src/api.ts: ←2",
          "i→ src/util/format.ts",
          "c Client(Base,Disposable)",
          "  v cache",
          "  v instances?",
          "  m constructor(base,retries?)",
          "  m dispose()->void",
          "  am get(path)->Promise<T> →fetchJson",
          "  p size->number",
          "t Method",
          "if RequestOptions(Partial<Headers>) ←1",
          "  v retries",
          "  v timeout?",
          "  m onRetry(attempt)->void",
          "e Status ←1",
          "v DEFAULT_TIMEOUT",
          "af fetchJson(url,options?)->Promise<T> ←1 →formatTokens,log",
          "f log(message,...rest)->void"
        )
      ],
      [
        "src/components/Chat.tsx",
        block(
          "src/components/Chat.tsx:",
          "i react",
          "i→ src/api.ts,src/util/format.ts",
          "if ChatProps",
          "  v title",
          "f ChatPanel({title}) →Header,pad",
          "f Header(props)"
        )
      ],
      [
        "src/legacy.js",
        block(
          "src/legacy.js:",
          "i path",
          "i→ src/util/format.ts",
          "c Store(EventEmitter)",
          "  v dir",
          "  v items",
          "  m constructor(dir,options?)",
          "  m create(dir) →Store",
          "f open(dir) →create,pad"
        )
      ],
      [
        "src/util/format.ts",
        block(
          "src/util/format.ts: ←4",
          "f formatTokens(n,opts?)->string ←1",
          "f pad(text,width?) ←2"
        )
      ]
    ]
  ],
  [
    "python",
    "Python",
    [
      [
        "pkg/models.py",
        block(
          "pkg/models.py: ←3",
          "i dataclasses,typing",
          "c User(Base) ←2",
          "  v email",
          "  v name",
          "  v verified",
          "  m __init__(name,email?,*tags,**extra)",
          "  p display->str",
          "  m parse(text)->User →User",
          "  am save(db)->None",
          "v MAX_NAME",
          "f make_user(name)->User ←1 →parse"
        )
      ],
      [
        "pkg/service.py",
        block(
          "pkg/service.py: ←1",
          "i ..external",
          "i→ pkg/__init__.py,pkg/models.py",
          "c UserService",
          "  m create(name) →make_user",
          "f run() ←1 →UserService"
        )
      ]
    ]
  ],
  [
    "go",
    "Go",
    [
      [
        "shapes/shape.go",
        block(
          "shapes/shape.go: ←1",
          "i math",
          "s Circle(Named)",
          "  v Radius",
          "  m Area()->float64 →square",
          "  m Perimeter()->float64",
          "if Shape ←1",
          "  m Area()->float64",
          "  m Perimeter()->float64",
          "v Pi",
          "f NewCircle(r,...names)->*Circle ←1 →Circle",
          "f square(x)->float64"
        )
      ],
      [
        "main.go",
        block(
          "main.go:",
          "i fmt",
          "i→ shapes/",
          "f main() →NewCircle,Shape"
        )
      ]
    ]
  ],
  [
    "rust",
    "Rust",
    [
      [
        "src/geometry.rs",
        block(
          "src/geometry.rs: ←1",
          "i→ src/util/mod.rs",
          "e Kind",
          "impl Point",
          "  m dx(other)->f64 →sqrt",
          "  m new(x,y)->Self →Point",
          "s Point ←1",
          "  v x",
          "  v y",
          "if Shape(fmt::Debug) ←1",
          "  m area()->f64",
          "  m name()->String",
          "impl Shape for Point",
          "  m area()->f64"
        )
      ],
      [
        "src/lib.rs",
        block(
          "src/lib.rs:",
          "i std",
          "i→ src/geometry.rs,src/util/mod.rs",
          "v ORIGIN →Point",
          "f distance(a,b)->f64 →sqrt",
          "af load(path)->Result<Vec<Point>,fmt::Error>"
        )
      ]
    ]
  ],
  [
    "java",
    "Java",
    [
      [
        "src/com/acme/app/App.java",
        block(
          "@1/app/App.java:",
          "i java.util.List",
          "i→ @1/model/Point.java,@1/model/Shape.java",
          "c App(Base,Runnable)",
          "  e Mode",
          "    m quick()->boolean",
          "  v NAME",
          "  m helper(points)->void",
          "  m run()->void →helper,of"
        )
      ],
      [
        "src/com/acme/model/Point.java",
        block(
          "@1/model/Point.java: ←1",
          "c Point(Comparable<Point>) ←1",
          "  c Pair",
          "    v a",
          "    v b",
          "  v x",
          "  v y",
          "  m Point(x,y)",
          "  m compareTo(other)->int",
          "  m of(x,y)->Point →Point"
        )
      ]
    ]
  ],
  [
    "c",
    "C",
    [
      [
        "include/vec.h",
        block(
          "include/vec.h: ←2",
          "i stddef.h",
          "s vec",
          "  v items",
          "  v len",
          "t vec_t",
          "f vec_new(capacity)->vec_t* ←1",
          "f vec_push(v,x)->void ←1",
          "f vec_sum(v)->double ←1"
        )
      ],
      [
        "src/main.c",
        block(
          "src/main.c:",
          "i stdio.h",
          "i→ include/vec.h",
          "v counter",
          "f main(argc,argv)->int →vec_new,vec_push,vec_sum"
        )
      ]
    ]
  ],
  [
    "cpp",
    "C++",
    [
      [
        "shapes.hpp",
        block(
          "shapes.hpp: ←1",
          "i string",
          "n geo",
          "  c Circle(Shape)",
          "    v radius_",
          "    m Circle(r)",
          "    m area()->double",
          "    m unit()->Circle",
          "  c Shape",
          "    v name",
          "    m area()->double",
          "    m ~Shape()",
          "  f clamp(value,lo,hi)->T"
        )
      ],
      [
        "shapes.cpp",
        block(
          "shapes.cpp:",
          "i→ shapes.hpp",
          "n geo",
          "  m Circle::Circle(r)",
          "  m Circle::area()->double",
          "  m Circle::unit()->Circle →Circle",
          "  f clamp(value,lo,hi)->T",
          "f main()->int →clamp,unit"
        )
      ]
    ]
  ]
]

const maps = new Map<string, ReturnType<typeof indexFixture>>()
const mapOf = (fixture: string): ReturnType<typeof indexFixture> => {
  let map = maps.get(fixture)
  if (map === undefined) maps.set(fixture, (map = indexFixture(fixture)))
  return map
}

describe.each(CASES)("%s fixture", (fixture, _title, expected) => {
  it.each(expected)("renders %s exactly", async (path, text) => {
    const { map } = await mapOf(fixture)
    expect(map.block(path)).toBe(text)
    expect(map.problems).toEqual([])
  })
})
