// Types for scripts/make-demo-repo.mjs, so TypeScript tests and benchmarks can import it.

/** Where `node scripts/make-demo-repo.mjs` builds by default: examples/demo-repo/. */
export declare const DEFAULT_OUT: string

/** How many commits the generated history has (the merge commit included). */
export declare const COMMIT_COUNT: number

export interface MakeDemoRepoOptions {
  /** Target directory; must not exist, be empty, or be a previous build (with `replace`). */
  readonly out?: string
  /** `false` writes the final tree only; "auto" (default) uses git when it is on PATH. */
  readonly git?: boolean | "auto"
  /** Rebuild a directory this script built before. */
  readonly replace?: boolean
}

export interface MakeDemoRepoResult {
  readonly out: string
  readonly git: boolean
  readonly commits: number
  /** HEAD commit hash; the same on every machine for the same git object format. */
  readonly head: string | null
}

/** Build the example repository ("Harbor": TypeScript, Python, Go) with its deterministic history. */
export declare function makeDemoRepo(options?: MakeDemoRepoOptions): MakeDemoRepoResult
