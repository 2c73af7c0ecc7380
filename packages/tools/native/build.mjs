// Builds the launcher (native/confine.c -> dist/native/toolcap-confine: Landlock confinement of
// ripgrep, and the cgroup entry of Bash's shell) with the C compiler a fresh machine has ($CC,
// else cc, gcc or g++). Linux only. Without a compiler, or on another system, it says so and
// succeeds: the tools then run with user-space checks only, and shells enter their cgroup by the
// sh prologue.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"

const here = import.meta.dirname
const source = path.join(here, "confine.c")
const output = path.join(here, "..", "dist", "native", "toolcap-confine")

if (process.platform !== "linux") {
  console.log("toolcap-confine: not Linux, no Landlock launcher built (user-space checks only)")
  process.exit(0)
}
fs.mkdirSync(path.dirname(output), { recursive: true })
const compilers = [process.env.CC, "cc", "gcc", "g++"].filter((name) => name !== undefined && name !== "")
// static first: without the dynamic loader the launcher's own start costs less per search
for (const compiler of compilers) {
  const language = compiler.endsWith("++") ? ["-x", "c"] : []
  for (const linking of [["-static"], []]) {
    const built = spawnSync(compiler, [...language, "-O2", "-Wall", ...linking, "-o", output, source], {
      stdio: linking.length > 0 ? "ignore" : "inherit"
    })
    if (built.status === 0) {
      console.log(
        `toolcap-confine: built ${path.relative(process.cwd(), output)} with ${compiler} ${linking.join(" ")}`
      )
      process.exit(0)
    }
  }
}
console.log(
  "toolcap-confine: no C compiler worked, no launcher built (user-space checks only, sh prologue for cgroups)"
)
