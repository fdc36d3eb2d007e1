/**
 * The errors an MCP call can end with. Each has a message an agent (or its user) can act
 * on; the server turns them into MCP errors and keeps serving.
 */
import { Schema } from "effect"

/** The arguments of a tool call do not match its input schema. */
export class InvalidToolInput extends Schema.TaggedError<InvalidToolInput>()("InvalidToolInput", {
  tool: Schema.String,
  issue: Schema.String
}) {
  override get message(): string {
    return `Invalid arguments for ${this.tool}: ${this.issue}`
  }
}

/** A call names a tool this server does not have. */
export class UnknownTool extends Schema.TaggedError<UnknownTool>()("UnknownTool", {
  tool: Schema.String,
  available: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `Unknown tool "${this.tool}"; this server has: ${this.available.join(", ")}`
  }
}

/** A path given to a tool is in the repository but has no symbols (not a file, not parsed, or deleted). */
export class FileNotInMap extends Schema.TaggedError<FileNotInMap>()("FileNotInMap", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.reason}; call repo_tree to see the repository's files.`
  }
}

/** A budget that cannot hold even the map's legend. */
export class BudgetTooSmall extends Schema.TaggedError<BudgetTooSmall>()("BudgetTooSmall", {
  budget: Schema.Number,
  minimum: Schema.Number
}) {
  override get message(): string {
    return `A budget of ${this.budget} tokens cannot hold the map's legend; ask for at least ${this.minimum} tokens.`
  }
}

/** The repository could not be indexed, or a session could not be read. */
export class RepositoryUnavailable extends Schema.TaggedError<RepositoryUnavailable>()("RepositoryUnavailable", {
  root: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot read the repository at ${this.root}: ${this.reason}`
  }
}
