/**
 * The process facts a command may read: its environment variables and working directory.
 * `runCli` provides them (the process's by default), so a command never reaches for
 * `process.env` or `process.cwd()` and an in-process run sees exactly what it was given.
 */
import { resolve } from "node:path"
import { Context, type Effect, Layer } from "effect"

export interface CliEnvironmentShape {
  readonly env: Readonly<Record<string, string | undefined>>
  /** Absolute; relative paths on the command line resolve against it. */
  readonly cwd: string
}

export class CliEnvironment extends Context.Service<CliEnvironment, CliEnvironmentShape>()("@strata/cli/CliEnvironment") {
  /** The given environment and directory (the process's by default). */
  static readonly layer = (options: { readonly env?: Readonly<Record<string, string | undefined>>; readonly cwd?: string } = {}): Layer.Layer<CliEnvironment> =>
    Layer.succeed(CliEnvironment, { env: options.env ?? process.env, cwd: resolve(options.cwd ?? process.cwd()) })
}

/** One environment variable, `undefined` when unset. */
export const envVar = (name: string): Effect.Effect<string | undefined, never, CliEnvironment> =>
  CliEnvironment.useSync((e) => e.env[name])

/** A path from the command line, absolute (relative to the run's working directory). */
export const fromCwd = (path: string): Effect.Effect<string, never, CliEnvironment> =>
  CliEnvironment.useSync((e) => resolve(e.cwd, path))
