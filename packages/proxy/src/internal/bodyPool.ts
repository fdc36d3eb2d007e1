/**
 * Request bodies read into reused buffers. A fresh buffer of a megabyte costs the kernel
 * hundreds of page faults on every request; a buffer given back once the upstream has
 * taken the bytes is written again by the next request instead. Bounded: at most
 * `maxFree` buffers and `maxFreeBytes` wait for reuse, the rest go to the collector.
 */
export interface BodyPool {
  /** A buffer of at least `size` bytes (its length is the capacity: use `subarray`). */
  readonly acquire: (size: number) => Buffer
  /** Give a buffer from `acquire` back; nothing may read or write it afterwards. */
  readonly release: (buffer: Buffer) => void
}

/** Bodies below this are concatenated as they come (small allocations are cheap). */
export const POOLED_MIN_BYTES = 128 * 1024

export const makeBodyPool = (maxFree = 64, maxFreeBytes = 128 * 1024 * 1024): BodyPool => {
  const free: Array<Buffer> = []
  let freeBytes = 0
  return {
    acquire: (size) => {
      let best = -1
      for (let i = 0; i < free.length; i++) {
        if (free[i]!.length >= size && (best < 0 || free[i]!.length < free[best]!.length)) best = i
      }
      if (best >= 0) {
        const [b] = free.splice(best, 1)
        freeBytes -= b!.length
        return b!
      }
      // Powers of two, so a session's growing bodies keep fitting the same buffers.
      let capacity = POOLED_MIN_BYTES
      while (capacity < size) capacity *= 2
      return Buffer.allocUnsafe(capacity)
    },
    release: (buffer) => {
      if (free.length >= maxFree || freeBytes + buffer.length > maxFreeBytes) return
      free.push(buffer)
      freeBytes += buffer.length
    }
  }
}
