/**
 * Terminal output for commands: stdout for results, stderr for diagnostics and progress,
 * colour only when the stream is a terminal and NO_COLOR is unset, progress bars only
 * when stderr is a terminal, questions only when stdin is one. Tests swap the layer.
 */
import { createInterface } from "node:readline"
import { Context, Effect, Layer, Logger } from "effect"
import { redactSecrets } from "@strata/store"

/** ANSI styling that is the identity when colour is off. */
export interface Style {
  readonly enabled: boolean
  readonly bold: (s: string) => string
  readonly dim: (s: string) => string
  readonly red: (s: string) => string
  readonly green: (s: string) => string
  readonly yellow: (s: string) => string
  readonly cyan: (s: string) => string
  readonly magenta: (s: string) => string
}

const sgr = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`

/**
 * Styling functions; all return their input unchanged when `enabled` is false.
 *
 * @example
 * ```ts
 * import { makeStyle } from "@strata/cli"
 * makeStyle(false).red("x") // "x"
 * ```
 */
export const makeStyle = (enabled: boolean): Style => {
  const id = (s: string) => s
  return enabled
    ? { enabled, bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39), magenta: sgr(35, 39) }
    : { enabled, bold: id, dim: id, red: id, green: id, yellow: id, cyan: id, magenta: id }
}

/**
 * Whether to colour a stream: never under NO_COLOR (any value) or TERM=dumb, always under
 * FORCE_COLOR (other than "0"), otherwise only when the stream is a terminal.
 */
export const colorEnabled = (env: Readonly<Record<string, string | undefined>>, isTTY: boolean): boolean => {
  if (env["NO_COLOR"] !== undefined && env["NO_COLOR"] !== "") return false
  if (env["TERM"] === "dumb") return false
  const force = env["FORCE_COLOR"]
  if (force !== undefined && force !== "" && force !== "0" && force.toLowerCase() !== "false") return true
  return isTTY
}

/**
 * Text from a model, a tool or a file, made safe to print on a terminal: every control
 * character but newline and tab (ESC, BEL, backspace, DEL, the C1 range) is shown
 * as a visible escape (`\x1b`) and a carriage return is dropped, so a reply cannot set the clipboard (OSC 52), retitle the
 * window or clear the screen. Strata's own colours are added after this. Per character,
 * so it works on stream chunks that split a sequence. Pure.
 *
 * @example
 * ```ts
 * import { terminalSafe } from "@strata/cli"
 * terminalSafe("hi\x1b]0;pwned\x07") // "hi\\x1b]0;pwned\\x07"
 * ```
 */
export const terminalSafe = (text: string): string =>
  // eslint-disable-next-line no-control-regex
  text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => (c === "\r" ? "" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`))

/**
 * The version of the CLI's `--json` documents. It changes when a field changes meaning
 * or goes away; a new field does not change it.
 */
export const JSON_SCHEMA_VERSION = 1

/**
 * A `--json` document: `schemaVersion` first, then the command's fields. `indent` as in
 * `JSON.stringify` (one-line documents for `chat`'s per-turn output and errors).
 *
 * @example
 * ```ts
 * import { jsonDocument } from "@strata/cli"
 * jsonDocument({ files: [] }) // '{"schemaVersion":1,"files":[]}'
 * ```
 */
export const jsonDocument = (fields: object, indent?: number): string => JSON.stringify({ schemaVersion: JSON_SCHEMA_VERSION, ...fields }, null, indent)

/** A progress indicator; every method is a no-op when stderr is not a terminal. */
export interface Progress {
  readonly update: (done: number, total?: number, detail?: string) => Effect.Effect<void>
  readonly finish: (summary?: string) => Effect.Effect<void>
}

export interface OutputShape {
  /** Write a line (a newline is added) to stdout. */
  readonly out: (text: string) => Effect.Effect<void>
  /** Write text to stdout as is (streamed replies). */
  readonly write: (text: string) => Effect.Effect<void>
  /** Write a line to stderr. */
  readonly err: (text: string) => Effect.Effect<void>
  /** Write `warning: text` on stderr, once per run however often it is raised (logged and returned alike). */
  readonly warn: (text: string) => Effect.Effect<void>
  readonly style: Style
  readonly errStyle: Style
  /** True when stderr is a terminal: progress bars are drawn. */
  readonly progressEnabled: boolean
  /** True when stdin is a terminal: the CLI may ask questions. */
  readonly interactive: boolean
  /**
   * Width of stdout / stderr in columns when it is a terminal; undefined for a pipe or a
   * file, so what those get does not depend on the window (the HUD box fits to it).
   */
  readonly columns: number | undefined
  readonly errColumns: number | undefined
  readonly progress: (label: string) => Effect.Effect<Progress>
  /** Ask a question on stderr and read one line; `undefined` when not interactive or at end of input. */
  readonly ask: (question: string) => Effect.Effect<string | undefined>
  /** Read lines from stdin until end of input (chat); `undefined` at end. */
  readonly readLine: (prompt: string) => Effect.Effect<string | undefined>
}

const noProgress: Progress = { update: () => Effect.void, finish: () => Effect.void }

/** `warn` for an output: each distinct warning once, in the output's error style. */
const warnOnce = (errStyle: Style, writeErr: (line: string) => void): ((text: string) => Effect.Effect<void>) => {
  const shown = new Set<string>()
  return (text) =>
    Effect.sync(() => {
      if (shown.has(text)) return
      shown.add(text)
      writeErr(errStyle.yellow(`warning: ${text}`) + "\n")
    })
}

/** Render one progress line: `label [#####.....] 12/40 detail`. Pure, for tests. */
export const renderProgress = (label: string, done: number, total: number | undefined, detail: string | undefined, width = 20): string => {
  if (total === undefined || total <= 0) return `${label} ${done}${detail ? ` ${detail}` : ""}`
  const filled = Math.max(0, Math.min(width, Math.round((done / total) * width)))
  return `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}${detail ? ` ${detail}` : ""}`
}

export class Output extends Context.Service<Output, OutputShape>()("@strata/cli/Output") {
  /** The process's streams, with colour and progress decided from TTY state and the environment. */
  static readonly layer: Layer.Layer<Output> = Layer.sync(Output, () => makeProcessOutput(process.env))
  /** The process's streams, with colour decided from `env` (a run's environment). */
  static readonly layerFor = (env: Readonly<Record<string, string | undefined>>): Layer.Layer<Output> => Layer.sync(Output, () => makeProcessOutput(env))
}

let lineReader: ReturnType<typeof createInterface> | undefined
let pendingLines: Array<string> = []
let waiting: ((line: string | undefined) => void) | undefined
let ended = false

// One readline interface for the whole process, so lines typed ahead are not lost between prompts.
const stdinLines = () => {
  if (lineReader !== undefined) return
  lineReader = createInterface({ input: process.stdin, terminal: false })
  lineReader.on("line", (line) => {
    if (waiting) {
      const w = waiting
      waiting = undefined
      w(line)
    } else pendingLines.push(line)
  })
  lineReader.on("close", () => {
    ended = true
    if (waiting) {
      const w = waiting
      waiting = undefined
      w(undefined)
    }
  })
}

const nextLine = (): Promise<string | undefined> => {
  stdinLines()
  const [first, ...rest] = pendingLines
  if (first !== undefined) {
    pendingLines = rest
    return Promise.resolve(first)
  }
  if (ended) return Promise.resolve(undefined)
  return new Promise((resolve) => {
    waiting = resolve
  })
}

/** Release stdin so the process can exit. */
export const closeInput = (): void => {
  lineReader?.close()
  lineReader = undefined
}

/**
 * Whether a reader closed stdout (`strata hud | head -3`, quitting `less`): later output
 * is dropped and the command ends normally, exit 0, instead of an EPIPE stack trace.
 */
let stdoutClosed = false
let stderrClosed = false
let streamsGuarded = false

/** Install the EPIPE handlers on stdout and stderr once per process. */
export const guardStreams = (): void => {
  if (streamsGuarded) return
  streamsGuarded = true
  const onError = (mark: () => void) => (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") mark()
    else throw error
  }
  process.stdout.on("error", onError(() => (stdoutClosed = true)))
  process.stderr.on("error", onError(() => (stderrClosed = true)))
}

const writeStdout = (text: string): void => {
  if (!stdoutClosed) process.stdout.write(text)
}
const writeStderr = (text: string): void => {
  if (!stderrClosed) process.stderr.write(text)
}

const makeProcessOutput = (env: Readonly<Record<string, string | undefined>>): OutputShape => {
  guardStreams()
  const stdoutTTY = process.stdout.isTTY === true
  const stderrTTY = process.stderr.isTTY === true
  const stdinTTY = process.stdin.isTTY === true
  const errStyle = makeStyle(colorEnabled(env, stderrTTY))
  const progressEnabled = stderrTTY && env["TERM"] !== "dumb"
  return {
    out: (text) => Effect.sync(() => writeStdout(text + "\n")),
    write: (text) => Effect.sync(() => writeStdout(text)),
    err: (text) => Effect.sync(() => writeStderr(text + "\n")),
    warn: warnOnce(errStyle, writeStderr),
    style: makeStyle(colorEnabled(env, stdoutTTY)),
    errStyle,
    progressEnabled,
    interactive: stdinTTY,
    // Read when used: a terminal can be resized while `strata chat` runs.
    get columns() {
      return stdoutTTY ? process.stdout.columns : undefined
    },
    get errColumns() {
      return stderrTTY ? process.stderr.columns : undefined
    },
    progress: (label) =>
      Effect.sync((): Progress => {
        if (!progressEnabled) return noProgress
        let last = 0
        const draw = (line: string) => writeStderr(`\r\x1b[2K${errStyle.dim(line)}`)
        draw(`${label}...`)
        return {
          update: (done, total, detail) =>
            Effect.sync(() => {
              // Redrawing more than ~20 times a second only costs time.
              const now = performance.now()
              if (now - last < 50 && done !== total) return
              last = now
              draw(renderProgress(label, done, total, detail))
            }),
          finish: (summary) => Effect.sync(() => writeStderr(`\r\x1b[2K${summary ? errStyle.dim(summary) + "\n" : ""}`))
        }
      }),
    ask: (question) =>
      stdinTTY
        ? Effect.promise(async () => {
            process.stderr.write(question)
            return nextLine()
          })
        : Effect.succeed(undefined),
    readLine: (prompt) =>
      Effect.promise(async () => {
        if (stdinTTY) process.stderr.write(prompt)
        return nextLine()
      })
  }
}

/**
 * An Output for an in-process run that behaves as the process does with pipes: nothing is
 * a terminal (no progress, no questions, no width), colour only as FORCE_COLOR/NO_COLOR in
 * `env` say, stdin read line by line from `input`. It records stdout and stderr.
 */
export const makeCapturedOutput = (options: { readonly env?: Readonly<Record<string, string | undefined>>; readonly input?: string } = {}) => {
  const env = options.env ?? {}
  const stdout: Array<string> = []
  const stderr: Array<string> = []
  const lines = (options.input ?? "").split("\n")
  // "a\nb\n" is two lines; a last line without a newline is still a line.
  if (lines[lines.length - 1] === "") lines.pop()
  const errStyle = makeStyle(colorEnabled(env, false))
  const shape: OutputShape = {
    out: (text) => Effect.sync(() => void stdout.push(text + "\n")),
    write: (text) => Effect.sync(() => void stdout.push(text)),
    err: (text) => Effect.sync(() => void stderr.push(text + "\n")),
    warn: warnOnce(errStyle, (line) => void stderr.push(line)),
    style: makeStyle(colorEnabled(env, false)),
    errStyle,
    progressEnabled: false,
    interactive: false,
    columns: undefined,
    errColumns: undefined,
    progress: () => Effect.succeed(noProgress),
    ask: () => Effect.succeed(undefined),
    readLine: () => Effect.sync(() => lines.shift())
  }
  return { layer: Layer.succeed(Output, shape), stdout: () => stdout.join(""), stderr: () => stderr.join("") }
}

/** An Output that records everything, for tests: no colour, no progress, scripted answers, `columns` as a terminal's width. */
export const makeTestOutput = (answers: ReadonlyArray<string> = [], options: { readonly columns?: number } = {}) => {
  const stdout: Array<string> = []
  const stderr: Array<string> = []
  const queue = [...answers]
  const shape: OutputShape = {
    out: (text) => Effect.sync(() => void stdout.push(text + "\n")),
    write: (text) => Effect.sync(() => void stdout.push(text)),
    err: (text) => Effect.sync(() => void stderr.push(text + "\n")),
    warn: warnOnce(makeStyle(false), (line) => void stderr.push(line)),
    style: makeStyle(false),
    errStyle: makeStyle(false),
    progressEnabled: false,
    interactive: answers.length > 0,
    columns: options.columns,
    errColumns: options.columns,
    progress: () => Effect.succeed(noProgress),
    ask: () => Effect.sync(() => queue.shift()),
    readLine: () => Effect.sync(() => queue.shift())
  }
  return { layer: Layer.succeed(Output, shape), stdout: () => stdout.join(""), stderr: () => stderr.join("") }
}

const logText = (message: unknown): string =>
  (Array.isArray(message) ? message : [message]).map((m) => (typeof m === "string" ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(" ")

/**
 * The CLI's logger: the packages' `Effect.logWarning` (and errors) become `warning: ...`
 * lines on the output's stderr (once each, like every warning), never stdout (which
 * carries results and --json). Info and debug logs only with --verbose.
 */
export const stderrLoggerLayer = (output: OutputShape, verbose: boolean): Layer.Layer<never> => {
  const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
    const text = redactSecrets(logText(message))
    const serious = logLevel === "Warn" || logLevel === "Error" || logLevel === "Fatal"
    if (serious) Effect.runSync(logLevel === "Warn" ? output.warn(text) : output.err(output.errStyle.yellow(`error: ${text}`)))
    else if (verbose && logLevel !== "Trace") Effect.runSync(output.err(output.errStyle.dim(`${logLevel.toLowerCase()}: ${text}`)))
  })
  return Logger.layer([logger])
}
