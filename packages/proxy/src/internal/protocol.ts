// The wire protocols the proxy reads (kept here so internal modules never import transform.ts).
/** The request formats the proxy understands. */
export type Protocol = "anthropic" | "openai-responses" | "openai-chat"
