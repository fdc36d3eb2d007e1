// Bundles the page (Preact, uPlot, the dashboard and the replay view) with esbuild into
// dist/page/: boot.js, app.js and app.css for the server, replay.js/replay.css inlined into replay reports.
// Run by `pnpm build`; nothing is fetched at run time.
import { build } from "esbuild"
import { fileURLToPath, URL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
await build({
  absWorkingDir: root,
  entryPoints: { app: "page/app.tsx", replay: "page/replay.tsx" },
  outdir: "dist/page",
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  platform: "browser",
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning"
})
// boot.js: a classic script the page loads first (it starts the first view's request).
await build({
  absWorkingDir: root,
  entryPoints: { boot: "page/boot.ts" },
  outdir: "dist/page",
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  platform: "browser",
  legalComments: "none",
  logLevel: "warning"
})
