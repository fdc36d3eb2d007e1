// A throwaway PostgreSQL cluster for tests and benchmarks: initdb into a temporary
// directory, start it on a free port bound to 127.0.0.1, stop and delete it at the end.
// Run as root (CI), the server runs as the `postgres` user, which owns the directory.
import process from "node:process"
import { execFileSync, spawnSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir, userInfo } from "node:os"
import { delimiter, join } from "node:path"

/** The directory of `pg_ctl`: $STRATA_PG_BIN, the newest /usr/lib/postgresql/<v>/bin, or $PATH. */
export const findPgBin = () => {
  if (process.env.STRATA_PG_BIN) return process.env.STRATA_PG_BIN
  const debian = "/usr/lib/postgresql"
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => existsSync(join(debian, v, "bin", "pg_ctl"))).sort((a, b) => Number(b) - Number(a))
    if (versions[0] !== undefined) return join(debian, versions[0], "bin")
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) if (dir !== "" && existsSync(join(dir, "pg_ctl"))) return dir
  return undefined
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/**
 * Start a cluster. Returns its URL and `restart(mode)` / `stop()`.
 */
export const startCluster = async () => {
  const bin = findPgBin()
  if (bin === undefined) {
    throw new Error("PostgreSQL server binaries not found (install the `postgresql` package, or set STRATA_PG_BIN or STRATA_TEST_PG_URL)")
  }
  const asRoot = userInfo().uid === 0
  const base = mkdtempSync(join(tmpdir(), "strata-pg-"))
  if (asRoot) {
    const ids = execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()
    const gid = execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim()
    chownSync(base, Number(ids), Number(gid))
  }
  const data = join(base, "data")
  const run = (tool, args) => {
    const cmd = asRoot ? "runuser" : join(bin, tool)
    const argv = asRoot ? ["-u", "postgres", "--", join(bin, tool), ...args] : args
    const r = spawnSync(cmd, argv, { encoding: "utf8", cwd: base })
    if (r.status !== 0) throw new Error(`${tool} ${args.join(" ")} failed (${r.status}): ${r.stderr || r.stdout}`)
    return r.stdout
  }
  run("initdb", ["-D", data, "-A", "trust", "-U", "strata", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"])
  const port = await freePort()
  const serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -k ${base} -c fsync=off -c full_page_writes=off -c max_connections=200`
  // fsync=off only skips flushes to the disk (this machine does not crash in a test); commits
  // still reach the OS at COMMIT, so a server crash-restart loses no committed transaction.
  const logFile = join(base, "server.log")
  run("pg_ctl", ["-D", data, "-l", logFile, "-w", "-t", "60", "-o", serverOptions, "start"])
  let stopped = false
  return {
    url: `postgres://strata@127.0.0.1:${port}/postgres`,
    port,
    dataDir: data,
    /** Restart the server; `immediate` is a crash (no shutdown checkpoint), `fast` a clean stop. */
    restart: (mode = "immediate") => {
      run("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "60", "stop"])
      run("pg_ctl", ["-D", data, "-l", logFile, "-w", "-t", "60", "-o", serverOptions, "start"])
    },
    stop: () => {
      if (stopped) return
      stopped = true
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
      } finally {
        rmSync(base, { recursive: true, force: true })
      }
    }
  }
}
