/**
 * Byte-stable serialization. Plugins build bodies with a fixed key order; user-given
 * JSON (tool schemas) is canonicalized with sorted keys, so the same request always
 * serializes to the same bytes and the provider's prefix hash does not drift.
 */

/** JSON-like data; `Uint8Array` is allowed because Bedrock's SDK takes image bytes. */
export type Json = string | number | boolean | null | Uint8Array | ReadonlyArray<Json> | { readonly [key: string]: Json | undefined }

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)

/**
 * A deep copy with object keys sorted (arrays keep their order; `undefined` members dropped).
 *
 * @example
 * ```ts
 * import { canonicalize } from "@strata/providers"
 * JSON.stringify(canonicalize({ b: 1, a: { d: 2, c: 3 } })) // '{"a":{"c":3,"d":2},"b":1}'
 * ```
 */
export const canonicalize = <A>(value: A): A => {
  if (Array.isArray(value)) return value.map((v: unknown) => canonicalize(v)) as A
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    const v = value[key]
    if (v !== undefined) out[key] = canonicalize(v)
  }
  return out as A
}

/**
 * Serialize a plugin body to JSON: keys in the order the plugin built them,
 * `Uint8Array` as base64 (the wire form of Bedrock's `bytes`).
 *
 * @example
 * ```ts
 * import { serializeBody } from "@strata/providers"
 * serializeBody({ model: "m", system: "s", image: new Uint8Array([1, 2]) }) // '{"model":"m","system":"s","image":"AQI="}'
 * ```
 */
export const serializeBody = (body: unknown): string =>
  JSON.stringify(body, (_key, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v))
