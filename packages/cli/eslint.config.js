// The repository's lint rules (their file patterns still relative to the repository root),
// plus: local scratch files (`.scratch/`, never committed) are not linted, so somebody's
// experiment in progress does not fail this package's lint task.
import root from "../../eslint.config.js"

export default [...root.map((config) => ({ ...config, basePath: "../.." })), { ignores: [".scratch/**"] }]
