/**
 * What a request's inputs become before any layout sees them, in one place for the flat
 * and tiered assemblies: at most `MAX_URLS_PER_MESSAGE` URLs (the rest cut, with a
 * warning) and images as image parts.
 */
import type { ImagePart } from "../domain/Message.ts"

/** At most this many URLs go into one request (docs/pipeline.md). */
export const MAX_URLS_PER_MESSAGE = 3

/**
 * Keep the first `MAX_URLS_PER_MESSAGE` URLs (contents, or any value standing for one),
 * with a warning to show the user when some were cut.
 *
 * @example
 * ```ts
 * import { limitUrls } from "@strata/core"
 * limitUrls(["a", "b", "c", "d"]).urls // ["a", "b", "c"]
 * ```
 */
export const limitUrls = <A>(urls: ReadonlyArray<A>): { readonly urls: ReadonlyArray<A>; readonly warning?: string } =>
  urls.length <= MAX_URLS_PER_MESSAGE
    ? { urls }
    : {
      urls: urls.slice(0, MAX_URLS_PER_MESSAGE),
      warning: `${urls.length} URLs were given; only the first ${MAX_URLS_PER_MESSAGE} are included in the request.`
    }

/** An image for the current prompt: a URL (`data:` or `https:`) or an image part. */
export type ImageInput = string | ImagePart

/**
 * An image as an image part (a URL string becomes `{ type: "image", url }`).
 *
 * @example
 * ```ts
 * import { imagePart } from "@strata/core"
 * imagePart("data:image/png;base64,AAAA") // { type: "image", url: "data:image/png;base64,AAAA" }
 * ```
 */
export const imagePart = (image: ImageInput): ImagePart => (typeof image === "string" ? { type: "image", url: image } : image)
