/**
 * Whether a process is still running, for the lock files of the stores and the tracker:
 * a lock whose holder on this host is gone can be taken over.
 */

/**
 * True when a process with this id exists on this host (signal 0 probes without sending
 * anything; `EPERM` means it exists but belongs to another user).
 *
 * @example
 * ```ts
 * import { processAlive } from "@strata/core"
 * processAlive(process.pid) // true
 * ```
 */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return typeof error === "object" && error !== null && "code" in error && error.code === "EPERM"
  }
}
