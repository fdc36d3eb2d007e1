/**
 * Reading request bodies, which arrive as `unknown`: narrowing helpers and a canonical
 * JSON that ignores key order and chosen keys (cache markers). Internal to the package.
 */

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
export const asArray = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])
export const asString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)

/** JSON with sorted keys, `undefined` members and the given keys left out. */
export const canonicalJson = (value: unknown, omit: ReadonlySet<string> = new Set()): string => {
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString("base64"))
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, omit)).join(",")}]`
  if (!isRecord(value)) return "null"
  const record = value
  const fields = Object.keys(record)
    .sort()
    .filter((k) => record[k] !== undefined && !omit.has(k))
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k], omit)}`)
  return `{${fields.join(",")}}`
}

