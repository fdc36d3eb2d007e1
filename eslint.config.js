// Lint rules the type checker cannot express: no floating promises, no `any`.
import js from "@eslint/js"
import tseslint from "typescript-eslint"

/** The files linted with type information (scripts/check.mjs hands them its own program). */
export const TYPED_FILES = ["packages/*/src/**/*.ts", "packages/*/test/**/*.ts"]

export default tseslint.config(
  // `.scratch/` holds somebody's experiment in progress (never committed); it is not linted.
  { ignores: ["**/dist/**", "**/node_modules/**", "examples/**", "bench/out/**", "packages/*/.scratch/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: TYPED_FILES,
    languageOptions: {
      // One program for the whole repository (tsconfig.json at the root), built once per run;
      // `pnpm check` builds it once for the typecheck and the lint together.
      parserOptions: { project: ["./tsconfig.json"], tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { "argsIgnorePattern": "^_", "varsIgnorePattern": "^_" }],
      "no-constant-condition": ["error", { "checkLoops": false }],
      "require-yield": "off"
    }
  }
)
