/**
 * Safe file access inside a repository: path checks, reads of regular files only, and
 * atomic writes that never follow a link.
 */
export * from "./insideRepo.ts"
export * from "./process.ts"
