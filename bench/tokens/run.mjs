// bench/tokens: cold vs warm (memoized) token counting over a ~1 MB mixed corpus.
// Uses @strata/core's built output; build it first (see bench/README.md).
// Prints medians measured in this run; the machine is shared, so absolute times are noisy.
/* global console, process, Buffer, URL */
import { createRequire } from "node:module"
import { performance } from "node:perf_hooks"
import { makeTokenCounter } from "../../packages/core/dist/index.js"
import { median, rng } from "../support.mjs"

// js-tiktoken is a dependency of @strata/core, so resolve it from there.
const coreRequire = createRequire(new URL("../../packages/core/package.json", import.meta.url))
const { Tiktoken } = coreRequire("js-tiktoken/lite")
const o200kModule = coreRequire("js-tiktoken/ranks/o200k_base")
const o200k = o200kModule.default ?? o200kModule

const MODEL = process.env.BENCH_MODEL ?? "gpt-4o"
const TARGET_BYTES = 1_000_000
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 5)
const WARM_RUNS = Number(process.env.WARM_RUNS ?? 25)

// Deterministic PRNG (mulberry32) so every run counts the same corpus.
const random = rng(20_240_601)
const pick = (xs) => xs[Math.floor(random() * xs.length)]
const words = ("the of and to in is that for it as with was on be by at this from or an are which not have " +
  "cache tier token prompt context message request model stable history symbol file repository block " +
  "assistant user system provider breakpoint prefix summary budget engine layer service effect schema " +
  "résumé naïve café Größe 東京 数据 über straße").split(" ")
const idents = ["items", "tracker", "counter", "request", "blocks", "tierOf", "hash", "tokens", "state", "config", "render", "update"]

const prose = () => {
  const sentences = []
  for (let s = 0; s < 8 + Math.floor(random() * 12); s++) {
    const n = 6 + Math.floor(random() * 18)
    const ws = Array.from({ length: n }, () => pick(words))
    ws[0] = ws[0][0].toUpperCase() + ws[0].slice(1)
    sentences.push(ws.join(" ") + pick([".", ".", ".", "?", "!"]))
  }
  return sentences.join(" ") + "\n\n"
}
const code = (i) => {
  const name = `${pick(idents)}${i}`
  const lines = [`export function ${name}(${pick(idents)}: number, ${pick(idents)}?: string): Promise<number> {`]
  for (let l = 0; l < 6 + Math.floor(random() * 20); l++) {
    lines.push(pick([
      `  const ${pick(idents)} = await ${pick(idents)}.${pick(idents)}(${Math.floor(random() * 1000)})`,
      `  if (${pick(idents)} > ${Math.floor(random() * 100)}) return ${pick(idents)} * 2 // ${pick(words)} ${pick(words)}`,
      `  for (const x of ${pick(idents)}) ${pick(idents)}.push({ key: \`file:\${x}\`, n: ${Math.floor(random() * 12)} })`,
      `  ${pick(idents)} ??= new Map<string, number>()`
    ]))
  }
  lines.push("}\n")
  return lines.join("\n")
}
const json = (i) => JSON.stringify(Array.from({ length: 5 + Math.floor(random() * 20) }, (_, k) => ({
  id: i * 100 + k,
  key: `symbol:src/${pick(idents)}/${pick(idents)}.ts`,
  tier: pick(["L0", "L1", "L2", "L3", "active"]),
  tokens: Math.floor(random() * 5000),
  hash: Array.from({ length: 16 }, () => Math.floor(random() * 16).toString(16)).join(""),
  note: pick(words) + " " + pick(words)
})), null, 2) + "\n"

// Documents of mixed kinds and sizes (like files and messages in a session), ~1 MB total.
const docs = []
let bytes = 0
for (let i = 0; bytes < TARGET_BYTES; i++) {
  const kind = i % 3
  let doc = ""
  const size = 1_000 + Math.floor(random() * 12_000)
  while (doc.length < size) doc += kind === 0 ? code(i) : kind === 1 ? prose() : json(i)
  docs.push(doc)
  bytes += Buffer.byteLength(doc)
}

const time = (f) => {
  const t0 = performance.now()
  const r = f()
  return [performance.now() - t0, r]
}
const countAll = (counter, inputs = docs) => inputs.reduce((sum, d) => sum + counter.count(d), 0)

const loadStart = performance.now()
const first = await makeTokenCounter(MODEL)
const loadMs = performance.now() - loadStart
const total = countAll(first) // also warms the JIT

const cold = []
for (let r = 0; r < COLD_RUNS; r++) {
  // A fresh counter has an empty memo; the encoder's rank table stays loaded.
  const counter = await makeTokenCounter(MODEL)
  const [ms, n] = time(() => countAll(counter))
  if (n !== total) throw new Error(`cold count changed: ${n} vs ${total}`)
  cold.push(ms)
}
// Warm counts, three ways. "copies": the same content as new string objects, as when
// files are re-read or sections re-rendered each request (the headline figure).
// "same strings": the very strings counted before. "hash only": the text memo off, so
// every count hashes its content with SHA-256.
const warmRuns = async (options, inputs) => {
  const counter = await makeTokenCounter(MODEL, options)
  countAll(counter, docs)
  const times = []
  for (let r = 0; r < WARM_RUNS; r++) {
    const fresh = inputs === "copies" ? docs.map((d) => Buffer.from(d, "utf8").toString("utf8")) : docs
    const [ms, n] = time(() => countAll(counter, fresh))
    if (n !== total) throw new Error(`warm count changed: ${n} vs ${total}`)
    times.push(ms)
  }
  return { ms: median(times), stats: counter.stats() }
}
const warmCopies = await warmRuns({}, "copies")
const warmSame = await warmRuns({}, "same")
const warmHash = await warmRuns({ memoChars: 0 }, "same")

// Reference: js-tiktoken's own encoder on the same corpus (one run; o200k models only).
let reference = ""
if (first.encoding === "o200k_base") {
  const tiktoken = new Tiktoken(o200k)
  const [ms, n] = time(() => docs.reduce((sum, d) => sum + tiktoken.encode(d, [], []).length, 0))
  reference = `js-tiktoken encode (reference, 1 run): ${ms.toFixed(1)} ms, ${n} tokens (${n === total ? "same count" : "DIFFERENT count"})`
}

const coldMs = median(cold)
const ratio = coldMs / warmCopies.ms
const fmt = (n) => n.toLocaleString("en-US")
const line = (label, w) =>
  `${label.padEnd(40)} ${w.ms.toFixed(3).padStart(9)} ms  ${(coldMs / w.ms).toFixed(0).padStart(6)}x faster  (memo hits ${fmt(w.stats.hits)}, misses ${fmt(w.stats.misses)})`
console.log(`bench/tokens  model=${MODEL} encoding=${first.encoding} exact=${first.exact}`)
console.log(`corpus: ${docs.length} documents (code, prose, JSON), ${fmt(bytes)} bytes, ${fmt(total)} tokens`)
console.log(`encoder load (first call in process): ${loadMs.toFixed(1)} ms`)
console.log(`${`cold count, empty memo (median of ${COLD_RUNS})`.padEnd(40)} ${coldMs.toFixed(3).padStart(9)} ms`)
console.log(line(`warm, equal copies (median of ${WARM_RUNS})`, warmCopies))
console.log(line(`warm, same strings (median of ${WARM_RUNS})`, warmSame))
console.log(line(`warm, SHA-256 memo only (median of ${WARM_RUNS})`, warmHash))
console.log(`ratio cold/warm (equal copies): ${ratio.toFixed(0)}x  (target >= 100x: ${ratio >= 100 ? "PASS" : "FAIL"})`)
if (reference) console.log(reference)
if (ratio < 100) process.exitCode = 1
