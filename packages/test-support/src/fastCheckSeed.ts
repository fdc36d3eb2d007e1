// Vitest setup file (vitest.shared.ts): property tests run with one fixed seed, so a run
// is reproducible and CI never goes red on a draw nobody can replay. Explore other draws
// with FC_SEED=<n> (or FC_SEED=random); a failure prints the seed and path to replay it.
import fc from "fast-check"

const requested = process.env["FC_SEED"]
if (requested !== "random") fc.configureGlobal({ seed: requested === undefined ? 20_261_125 : Number(requested) })
