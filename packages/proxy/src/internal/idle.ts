/**
 * Work no reply waits for (the as-sent simulator, the store commit), kept off the path of
 * the requests being read and planned. A job starts from `setImmediate`, one per turn of
 * the event loop: the poll phase before it has handled every socket event that was ready,
 * so a body whose last bytes arrived is planned and forwarded before the next job starts.
 * A job that is running is never interrupted: a request whose body completes meanwhile
 * waits for its synchronous part (a job can yield with `nextTurn` between steps).
 *
 * Jobs of one key (a session) run in order, one at a time; jobs of different keys may
 * overlap while they wait on the store (at most `maxRunning`). Bounded: past `maxQueued`
 * waiting jobs, a turn starts every job whose key is free, past `maxRunning` too, so under
 * sustained load the queue does not grow without limit.
 */
export interface IdleQueue {
  /** Queue a job; resolves once it has run (its failure is its own: it never rejects). */
  readonly push: (key: string, job: () => Promise<void>) => Promise<void>
  /** Jobs queued or running. */
  readonly size: () => number
  /** Resolves once no job is queued or running. */
  readonly drained: () => Promise<void>
}

interface Job {
  readonly key: string
  readonly run: () => Promise<void>
  readonly done: () => void
}

/** Resolves on the next turn of the event loop, after its I/O. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export const makeIdleQueue = (options: { readonly maxQueued?: number; readonly maxRunning?: number } = {}): IdleQueue => {
  const maxQueued = options.maxQueued ?? 64
  const maxRunning = options.maxRunning ?? 16
  const waiting: Array<Job> = []
  const running = new Set<string>()
  let scheduled = false
  let idleWaiters: Array<() => void> = []

  // A turn only when a job can start: a job whose key is running waits for its `finally`.
  const schedule = () => {
    if (scheduled || (running.size >= maxRunning && waiting.length <= maxQueued) || !waiting.some((j) => !running.has(j.key))) return
    scheduled = true
    setImmediate(turn)
  }

  const start = (job: Job) => {
    running.add(job.key)
    let ran: Promise<void>
    try {
      ran = job.run()
    } catch {
      ran = Promise.resolve()
    }
    void ran
      .catch(() => {})
      .finally(() => {
        running.delete(job.key)
        job.done()
        schedule()
        if (waiting.length === 0 && running.size === 0) {
          const waiters = idleWaiters
          idleWaiters = []
          for (const w of waiters) w()
        }
      })
  }

  const turn = () => {
    scheduled = false
    // One job a turn. Over the bound (the proxy is saturated and the queue falls behind),
    // every job whose session is free starts now, past `maxRunning`: the backlog then
    // drains at the speed of the CPU, which holds back the reading of new requests, rather
    // than growing with every request (each waiting job holds its request's parsed body).
    const catchUp = waiting.length > maxQueued
    let budget = catchUp ? waiting.length : 1
    for (let i = 0; i < waiting.length && budget > 0 && (catchUp || running.size < maxRunning); ) {
      const job = waiting[i]!
      if (running.has(job.key)) {
        i++
        continue
      }
      waiting.splice(i, 1)
      budget--
      start(job)
    }
    schedule()
  }

  return {
    push: (key, run) =>
      new Promise<void>((resolve) => {
        waiting.push({ key, run, done: resolve })
        schedule()
      }),
    size: () => waiting.length + running.size,
    drained: () => (waiting.length === 0 && running.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve)))
  }
}
