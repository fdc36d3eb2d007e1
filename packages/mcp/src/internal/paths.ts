// Paths an agent gives, made repository-relative: absolute paths inside the root are
// accepted, anything that leaves the root (`..`, another absolute path) is refused.
import { PathOutsideRepo } from "@strata/core"
import { Effect } from "effect"
import { isAbsolute, posix, relative, sep } from "node:path"

/** `given` as a repository-relative POSIX path, or `PathOutsideRepo`. */
export const repoPath = (root: string, given: string): Effect.Effect<string, PathOutsideRepo> =>
  Effect.suspend(() => {
    let path = given.trim()
    if (isAbsolute(path)) path = relative(root, path).split(sep).join("/")
    path = posix.normalize(path.replaceAll("\\", "/"))
    if (path === ".." || path.startsWith("../") || posix.isAbsolute(path) || isAbsolute(path)) {
      return Effect.fail(new PathOutsideRepo({ path: given, root }))
    }
    return Effect.succeed(path === "." ? "" : path.replace(/^\.\//, "").replace(/\/$/, ""))
  })
