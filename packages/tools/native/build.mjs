// Builds the launcher (native/confine.c -> dist/native/linux-<arch>/toolcap-confine): Landlock
// confinement of ripgrep, the cgroup entry and scopes of Bash's shell. Linux only.
//
// Reproducible: the flags below are pinned, the binary is static, stripped and carries no build id,
// no compiler ident and no path of the build machine, so the same compiler and C library give the
// same bytes (the SHA-256 is printed). It is built for this machine's architecture with `$CC`, cc
// or gcc, and for the other Linux architecture toolcap ships (x64 <-> arm64) where that cross
// compiler is installed (`aarch64-linux-gnu-gcc`, `x86_64-linux-gnu-gcc`). Without a compiler, or
// on another system, it says so and succeeds: the tools then run with user-space checks only, and
// shells enter their cgroup by the sh prologue.
//
// `node native/build.mjs --out DIR` builds into DIR instead (the reproducibility test builds twice).
import { spawnSync } from "node:child_process"
import crypto from "node:crypto"
import fs from "node:fs"
import path from "node:path"

const here = import.meta.dirname
const source = path.join(here, "confine.c")
const outFlag = process.argv.indexOf("--out")
const outDir =
  outFlag >= 0 ? path.resolve(process.argv[outFlag + 1]) : path.join(here, "..", "dist", "native")

/** The architectures toolcap ships a launcher for, by Node's `process.arch` name, and their cross compilers. */
const ARCHES = { x64: "x86_64-linux-gnu-gcc", arm64: "aarch64-linux-gnu-gcc" }

/** Pinned flags: optimised, warnings on, nothing of the build machine in the output. */
const FLAGS = [
  "-std=gnu11",
  "-O2",
  "-Wall",
  "-Wextra",
  "-fno-ident",
  `-ffile-prefix-map=${here}=.`,
  "-static",
  "-s",
  "-Wl,--build-id=none"
]

if (process.platform !== "linux") {
  console.log("toolcap-confine: not Linux, no Landlock launcher built (user-space checks only)")
  process.exit(0)
}

const works = (compiler) => spawnSync(compiler, ["--version"], { stdio: "ignore" }).status === 0

const sha256 = (file) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")

/** Builds for `arch` with the first compiler that works; static first, else (this arch only) dynamic. */
const build = (arch, compilers, allowDynamic) => {
  const output = path.join(outDir, `linux-${arch}`, "toolcap-confine")
  fs.mkdirSync(path.dirname(output), { recursive: true })
  for (const compiler of compilers.filter(works)) {
    for (const flags of allowDynamic ? [FLAGS, FLAGS.filter((f) => f !== "-static")] : [FLAGS]) {
      const built = spawnSync(compiler, [...flags, "-o", output, source], { stdio: "pipe", encoding: "utf8" })
      if (built.status === 0) {
        const linking = flags.includes("-static") ? "static" : "dynamic"
        console.log(
          `toolcap-confine: linux-${arch} ${linking} with ${compiler}: sha256 ${sha256(output)} (${fs.statSync(output).size} bytes)`
        )
        return true
      }
      if (flags === FLAGS) process.stderr.write(built.stderr)
    }
  }
  fs.rmSync(output, { force: true })
  return false
}

const own = process.arch
const native = [process.env.CC, "cc", "gcc"].filter((name) => name !== undefined && name !== "")
if (!(own in ARCHES) || !build(own, [...native, ARCHES[own]], true)) {
  console.log(
    `toolcap-confine: no C compiler worked for linux-${own}, no launcher built (user-space checks only, sh prologue for cgroups)`
  )
}
for (const [arch, cross] of Object.entries(ARCHES)) {
  if (arch === own) continue
  if (!build(arch, [cross], false)) console.log(`toolcap-confine: no ${cross}, no launcher for linux-${arch}`)
}
