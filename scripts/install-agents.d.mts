// Types for scripts/install-agents.mjs, so TypeScript tests can find the installed agents.

/** The pinned agents: npm package, version and command name. */
export declare const AGENTS: Readonly<Record<"claude" | "codex", { readonly pkg: string; readonly version: string; readonly bin: string }>>

/** Where the agents are installed (STRATA_AGENTS_DIR, else .cache/agents at the repository root). */
export declare const agentsDir: string

/** Where each agent's command is, installed or not. */
export declare function agentPaths(): Record<"claude" | "codex", string>
