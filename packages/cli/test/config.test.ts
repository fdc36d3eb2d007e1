import { describe, expect, it } from "vitest"
import { DEFAULT_MODELS, formatSchemaIssue, initialConfigFile, modelServedBy, parseConfigFile, resolveConfig } from "../src/support/config.ts"
import { ConfigInvalid, diagnose, ExitCode, ModelNotServed, RepoNotFound, UsageError } from "../src/support/errors.ts"
import { colorEnabled, makeStyle, renderProgress } from "../src/support/output.ts"
import { ignoresStrata, withStrataIgnored } from "../src/commands/init.ts"

describe("resolveConfig precedence: flags > env > file > defaults", () => {
  const file = { version: 1 as const, provider: "gemini" as const, model: "gemini-2.5-pro", policy: "gated" as const, budgets: { mapTokens: 500 } }

  it("uses defaults when nothing is given", () => {
    const c = resolveConfig({})
    expect(c.provider).toBe("anthropic")
    expect(c.model).toBe(DEFAULT_MODELS.anthropic)
    expect(c.policy).toBe("flux")
    expect(c.budgets.mapTokens).toBeNull()
    expect(c.sources["provider"]).toBe("default")
  })

  it("file beats defaults, env beats file, flags beat env", () => {
    expect(resolveConfig({ file }).provider).toBe("gemini")
    expect(resolveConfig({ file, env: { STRATA_PROVIDER: "openai" } }).provider).toBe("openai")
    const c = resolveConfig({ file, env: { STRATA_PROVIDER: "openai", STRATA_MAP_TOKENS: "900" }, flags: { provider: "bedrock", mapTokens: 42 } })
    expect(c.provider).toBe("bedrock")
    expect(c.budgets.mapTokens).toBe(42)
    // The file's model was set for gemini; bedrock, chosen above it, brings its own default.
    expect(c.model).toBe(DEFAULT_MODELS.bedrock)
    expect(c.sources).toMatchObject({ provider: "flag", "budgets.mapTokens": "flag", model: "default", policy: "file" })
  })

  it("the default model follows the chosen provider", () => {
    expect(resolveConfig({ flags: { provider: "openai" } }).model).toBe(DEFAULT_MODELS.openai)
  })

  it("--provider without --model drops a model configured for another provider", () => {
    const claude = { version: 1 as const, provider: "anthropic" as const, model: "claude-sonnet-4-5" }
    expect(resolveConfig({ file: claude, flags: { provider: "openai" } })).toMatchObject({ model: DEFAULT_MODELS.openai, sources: { model: "default" } })
    expect(resolveConfig({ env: { STRATA_MODEL: "claude-opus-4-5" }, flags: { provider: "gemini" } }).model).toBe(DEFAULT_MODELS.gemini)
    // The same provider again keeps the model; so does a model given at the provider's own level or above.
    expect(resolveConfig({ file: claude, flags: { provider: "anthropic" } }).model).toBe("claude-sonnet-4-5")
    expect(resolveConfig({ file: { version: 1, provider: "openai" }, flags: { model: "gpt-4.1" } }).model).toBe("gpt-4.1")
    expect(resolveConfig({ env: { STRATA_PROVIDER: "openai", STRATA_MODEL: "gpt-4.1" }, file: claude }).model).toBe("gpt-4.1")
    // A gateway keeps a model set at its own level.
    expect(resolveConfig({ flags: { provider: "ai-sdk", model: "gemini-2.5-pro" } }).model).toBe("gemini-2.5-pro")
  })

  it("a model another provider serves is an error naming both, with what to do", () => {
    const error = (() => {
      try {
        resolveConfig({ flags: { provider: "openai", model: "claude-sonnet-5" } })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(ModelNotServed)
    const d = diagnose(error)
    expect(d.message).toBe("Model claude-sonnet-5 (set in --model) is not served by provider openai; the model table lists it under anthropic, bedrock")
    expect(d.hint).toBe("drop --model to use openai's default model (gpt-5.4), pass --model with one of openai's models, or pass --provider anthropic")
    expect(d.exitCode).toBe(ExitCode.usage)
    expect(() => resolveConfig({ file: { version: 1, provider: "gemini", model: "gpt-4.1" } })).toThrow(/set in \.strata\/config\.json\) is not served by provider gemini/)
    // A model no table knows (newer than the table) is taken on trust.
    expect(resolveConfig({ flags: { provider: "openai", model: "gpt-9-turbo" } }).model).toBe("gpt-9-turbo")
  })

  it("modelServedBy: direct providers serve their own table's models, gateways any", () => {
    expect(modelServedBy("openai", "gpt-4.1")).toBe(true)
    expect(modelServedBy("openai", "claude-sonnet-5")).toBe(false)
    expect(modelServedBy("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe(true)
    expect(modelServedBy("gemini", "gemini-2.5-flash")).toBe(true)
    expect(modelServedBy("anthropic", "gemini-2.5-flash")).toBe(false)
    expect(modelServedBy("openai-compatible", "claude-sonnet-5")).toBe(true)
    for (const provider of Object.keys(DEFAULT_MODELS) as Array<keyof typeof DEFAULT_MODELS>) expect(modelServedBy(provider, DEFAULT_MODELS[provider])).toBe(true)
  })

  it("a malformed environment value names the variable", () => {
    expect(() => resolveConfig({ env: { STRATA_POLICY: "fast" } })).toThrow(/\$STRATA_POLICY.*threshold, gated, flux/)
    expect(() => resolveConfig({ env: { STRATA_MAP_TOKENS: "-3" } })).toThrow(ConfigInvalid)
  })

  it("empty environment values count as unset", () => {
    expect(resolveConfig({ env: { STRATA_PROVIDER: "" } }).sources["provider"]).toBe("default")
  })
})

describe("config file", () => {
  it("parses a valid file", () => {
    expect(parseConfigFile('{"version":1,"provider":"openai","budgets":{"compactionTokens":0}}', "c.json")).toEqual({
      version: 1,
      provider: "openai",
      budgets: { compactionTokens: 0 }
    })
  })

  it.each([
    ['{"version":1,"policy":"fast"}', /c\.json: policy: Expected "threshold" \| "gated" \| "flux"/],
    ['{"version":1,"budgets":{"mapTokens":0}}', /budgets\.mapTokens: Expected a value greater than 0/],
    ['{"version":2}', /version: Expected 1/],
    ['{"version":1,"modle":"x"}', /modle: Expected no excess property/],
    ["{not json", /not valid JSON/],
    ["", /not valid JSON/]
  ])("rejects %s naming the problem", (text, pattern) => {
    expect(() => parseConfigFile(text, "c.json")).toThrow(pattern)
  })

  it("what init writes parses back to the same values", () => {
    const resolved = resolveConfig({ flags: { provider: "openai", mapTokens: 1000 } })
    const written = initialConfigFile(resolved)
    const reread = resolveConfig({ file: parseConfigFile(JSON.stringify(written), "c.json") })
    expect(reread.provider).toBe("openai")
    expect(reread.budgets).toEqual(resolved.budgets)
  })

  it("formats schema messages as one line with a dotted path", () => {
    expect(formatSchemaIssue('Expected number\n  at ["budgets"]["mapTokens"]')).toBe("budgets.mapTokens: Expected number")
    expect(formatSchemaIssue("Expected string")).toBe("Expected string")
  })
})

describe("diagnose", () => {
  it("maps usage errors to exit 2 and failures to exit 1, with hints", () => {
    expect(diagnose(new UsageError({ reason: "bad" }))).toEqual({ message: "bad", hint: undefined, exitCode: ExitCode.usage })
    const repo = diagnose(new RepoNotFound({ path: "/x", reason: "does not exist" }))
    expect(repo.exitCode).toBe(2)
    expect(repo.hint).toMatch(/--repo/)
    expect(diagnose(new ConfigInvalid({ path: "c", issue: "x" })).exitCode).toBe(1)
    // Errors of other packages are recognised by tag.
    expect(diagnose({ _tag: "PathOutsideRepo", message: "Path ../x resolves outside" }).exitCode).toBe(2)
    expect(diagnose(new Error("line one\nline two")).message).toBe("line one")
  })
})

describe(".gitignore handling", () => {
  it("recognises existing entries", () => {
    expect(ignoresStrata("node_modules\n.strata/\n")).toBe(true)
    expect(ignoresStrata("/.strata\n")).toBe(true)
    expect(ignoresStrata(".strata-old/\n")).toBe(false)
  })
  it("appends on a new line", () => {
    expect(withStrataIgnored("dist")).toBe("dist\n# Strata session state (strata init)\n.strata/\n")
    expect(ignoresStrata(withStrataIgnored(""))).toBe(true)
  })
})

describe("colour and progress", () => {
  it("is off under NO_COLOR or TERM=dumb, on under FORCE_COLOR, else follows the TTY", () => {
    expect(colorEnabled({ NO_COLOR: "1" }, true)).toBe(false)
    expect(colorEnabled({ TERM: "dumb" }, true)).toBe(false)
    expect(colorEnabled({ FORCE_COLOR: "1" }, false)).toBe(true)
    expect(colorEnabled({ FORCE_COLOR: "0" }, false)).toBe(false)
    expect(colorEnabled({}, true)).toBe(true)
    expect(colorEnabled({}, false)).toBe(false)
    expect(makeStyle(false).bold("x")).toBe("x")
    expect(makeStyle(true).bold("x")).toBe("\x1b[1mx\x1b[22m")
  })
  it("renders a bar", () => {
    expect(renderProgress("index", 5, 10, "src/a.ts", 10)).toBe("index [#####.....] 5/10 src/a.ts")
    expect(renderProgress("index", 3, undefined, undefined)).toBe("index 3")
  })
})
