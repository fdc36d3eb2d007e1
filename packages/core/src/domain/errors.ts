/**
 * The tagged errors of `@strata/core`. Each carries the data a caller needs and a
 * `message` that says what went wrong and what to do about it.
 */
import { Schema } from "effect"

/** A path resolved outside the repository root (`..`, absolute, or a symlink out). */
export class PathOutsideRepo extends Schema.TaggedError<PathOutsideRepo>()("PathOutsideRepo", {
  path: Schema.String,
  root: Schema.String,
  /** The symbolic link that leads out, as `link -> target`, when a link is the reason. */
  link: Schema.optionalKey(Schema.String)
}) {
  override get message(): string {
    return this.link === undefined
      ? `Path "${this.path}" resolves outside the repository root ${this.root}; pass a path inside the repository.`
      : `Path "${this.path}" resolves outside the repository root ${this.root} through the link ${this.link}; Strata never reads or writes outside the repository: remove the link, or make it point inside the repository.`
  }
}

/** A file is binary (it contains a NUL byte); Strata only puts text in context. */
export class BinaryFile extends Schema.TaggedError<BinaryFile>()("BinaryFile", {
  path: Schema.String,
  /** Byte offset of the first NUL, when known. */
  offset: Schema.optionalKey(Schema.Number)
}) {
  override get message(): string {
    const where = this.offset === undefined ? "a NUL byte" : `a NUL byte at offset ${this.offset}`
    return `File "${this.path}" is binary (${where}); only text files can be added to context.`
  }
}

/** The kinds of file that are not regular files. */
export const SpecialFileKind = Schema.Literals(["FIFO", "socket", "character device", "block device", "directory", "unknown"])
export type SpecialFileKind = typeof SpecialFileKind.Type

/**
 * A path names a FIFO, socket or device (or a directory where a file was expected).
 * Strata only reads regular files: opening a FIFO would wait forever for a writer.
 */
export class SpecialFile extends Schema.TaggedError<SpecialFile>()("SpecialFile", {
  path: Schema.String,
  kind: SpecialFileKind
}) {
  override get message(): string {
    const what = this.kind === "FIFO" ? "a FIFO (named pipe)" : this.kind === "unknown" ? "not a regular file" : `a ${this.kind}`
    return `"${this.path}" is ${what}, not a regular file; Strata only reads regular files. Leave it out, or replace it with a regular file.`
  }
}

/** A file is larger than the configured limit. */
export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()("FileTooLarge", {
  path: Schema.String,
  size: Schema.Number,
  limit: Schema.Number
}) {
  override get message(): string {
    return `File "${this.path}" is ${this.size} bytes, over the ${this.limit}-byte limit; raise maxFileBytes or leave the file out.`
  }
}

/** A file does not exist (or is not a regular file). */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", {
  path: Schema.String
}) {
  override get message(): string {
    return `File "${this.path}" was not found in the repository; check the path (it is relative to the repository root).`
  }
}

/** Reading a file failed for a reason other than the ones above (permissions, I/O). */
export class FileReadError extends Schema.TaggedError<FileReadError>()("FileReadError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Could not read "${this.path}": ${this.reason}`
  }
}

/** Writing a file under the repository failed (permissions, disk full, I/O). */
export class FileWriteError extends Schema.TaggedError<FileWriteError>()("FileWriteError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Could not write "${this.path}": ${this.reason}`
  }
}

/** Input given to a public API failed Schema decoding; `issue` names the bad field. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  what: Schema.String,
  issue: Schema.String
}) {
  override get message(): string {
    return `Invalid ${this.what}: ${this.issue}`
  }
}

/** A prompt file is missing both from the user's prompts folder and from the bundled defaults. */
export class PromptNotFound extends Schema.TaggedError<PromptNotFound>()("PromptNotFound", {
  name: Schema.String,
  searched: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `Prompt "${this.name}" was not found (looked in ${this.searched.join(", ")}); add it to your prompts folder or reinstall @strata/core.`
  }
}
