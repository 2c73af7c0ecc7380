// Bundles the front end (src/ui) into dist/ui/app.js and copies its stylesheet: one small module,
// no framework, nothing loaded from elsewhere at run time.
import { build } from "esbuild"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"

const here = (relative) => fileURLToPath(new URL(relative, import.meta.url))

export const buildUi = async (outDir = here("../dist/ui")) => {
  fs.mkdirSync(outDir, { recursive: true })
  await build({
    entryPoints: [here("../src/ui/main.ts")],
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2022",
    outfile: `${outDir}/app.js`,
    logLevel: "warning"
  })
  fs.copyFileSync(here("../src/ui/app.css"), `${outDir}/app.css`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildUi()
