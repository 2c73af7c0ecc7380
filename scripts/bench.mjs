// `pnpm bench`: runs every packages/*/bench/*.bench.ts (and apps/*, bench/*) one after another, each
// in its own Node process so one bench's heap and peak RSS do not leak into the next. Each bench measures
// its own baseline in the same run and prints ratios; a missed target is reported, not hidden.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const only = process.argv.slice(2)
const files = ["packages", "apps", "bench"]
  .flatMap((group) => fs.readdirSync(path.join(root, group)).map((name) => path.join(group, name, "bench")))
  .filter((dir) => fs.existsSync(path.join(root, dir)))
  .flatMap((dir) =>
    fs
      .readdirSync(path.join(root, dir))
      .filter((f) => f.endsWith(".bench.ts"))
      .map((f) => path.join(dir, f))
  )
  .filter((file) => only.length === 0 || only.some((o) => file.includes(o)))

let failures = 0
for (const file of files) {
  console.log(`\n== ${file}`)
  const r = spawnSync(
    process.execPath,
    ["--conditions=@toolcap/source", "--import", "tsx", "--expose-gc", path.join(root, file)],
    { cwd: path.join(root, path.dirname(path.dirname(file))), stdio: "inherit" }
  )
  if (r.status !== 0) {
    failures++
    console.log(`== ${file}: exit ${r.status ?? r.signal}`)
  }
}
console.log(`\n${files.length} bench files run, ${failures} reported a missed target or failed`)
process.exit(failures === 0 ? 0 : 1)
