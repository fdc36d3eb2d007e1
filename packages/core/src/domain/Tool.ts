/**
 * Tool definitions in neutral form: a name, a description and a JSON Schema for the
 * input. Each provider plugin renders them in its own shape, first in the prefix.
 */
import { Schema } from "effect"

/**
 * A JSON Schema object describing a tool's input (`type: "object"` and any keywords).
 */
export const JsonSchemaObject = Schema.StructWithRest(Schema.Struct({ type: Schema.Literal("object") }), [
  Schema.Record(Schema.String, Schema.Unknown)
])
export type JsonSchemaObject = typeof JsonSchemaObject.Type

/**
 * A tool the model may call. Plugins render the list before everything else in the
 * cached prefix, so a change to any tool invalidates the whole prefix (as on every
 * provider); keep the list and its order stable.
 *
 * @example
 * ```ts
 * import type { ToolDefinition } from "@strata/core"
 * const readFile: ToolDefinition = {
 *   name: "read_file",
 *   description: "Read a file from the repository",
 *   inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
 * }
 * ```
 */
export const ToolDefinition = Schema.Struct({
  name: Schema.String,
  description: Schema.optionalKey(Schema.String),
  inputSchema: JsonSchemaObject
}).annotate({ identifier: "ToolDefinition" })
export type ToolDefinition = typeof ToolDefinition.Type
