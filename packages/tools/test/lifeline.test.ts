/**
 * The lifeline's watchdog after its host is killed: a call cgroup parent the host kept for its
 * next call (no call running) is removed when empty, and kept while a cgroup is in it. The host
 * here is a real Node process registering a host-wide rule, as the cgroup tier does; the
 * watchdog is the real `/bin/sh` script reading end of file.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { cgroupParent } from "./bashFixtures.js"

const parent = cgroupParent()
const lifeline = fileURLToPath(new URL("../dist/internal/supervisor/lifeline.js", import.meta.url))
/** Test parents beside the tier's own, removed after whatever happened. */
const made: Array<string> = []
afterAll(() => {
  // children first: a cgroup is removed with rmdir, and only when no cgroup is in it
  for (let index = made.length - 1; index >= 0; index--) {
    if (fs.existsSync(made[index]!)) fs.rmdirSync(made[index]!)
  }
})

/** A host that registers `cgs <dir> run-lifeline.` with the watchdog, then is SIGKILLed. */
const killHostAfterRegistering = async (dir: string): Promise<void> => {
  const host = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const L = await import(${JSON.stringify(lifeline)});
       const watchdog = L.makeUnsafe();
       watchdog.registerStanding({ kind: "cgs", parent: ${JSON.stringify(dir)}, prefix: "run-lifeline." });
       process.stdout.write("ready " + watchdog.pid() + "\\n");
       setInterval(() => {}, 1000);`
    ],
    { stdio: ["ignore", "pipe", "inherit"] }
  )
  const watchdog = await new Promise<number>((resolve, reject) => {
    host.stdout.on("data", (data: Buffer) => {
      const match = /^ready (\d+)/.exec(data.toString())
      if (match !== null) resolve(Number(match[1]))
    })
    host.on("exit", (code) => reject(new Error(`the host exited first (${code})`)))
  })
  host.kill("SIGKILL")
  // the watchdog reads end of file and exits after its sweep
  while (isAlive(watchdog)) await new Promise((resolve) => setTimeout(resolve, 50))
}

const isAlive = (pid: number): boolean => {
  try {
    return !/^\S+ \S+ Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/\(.*\)/, "x"))
  } catch {
    return false
  }
}

describe.runIf(parent !== undefined)("the lifeline after its host is killed (cgroup v2)", () => {
  it("removes the parent the host kept when it is empty, and keeps one a cgroup is still in", async () => {
    const empty = path.join(path.dirname(parent!), `toolcap-lifeline-test.${process.pid}.a`)
    const used = path.join(path.dirname(parent!), `toolcap-lifeline-test.${process.pid}.b`)
    const other = path.join(used, "another-host")
    for (const dir of [empty, used, other]) {
      fs.mkdirSync(dir)
      made.push(dir)
    }
    await killHostAfterRegistering(empty)
    assert.isFalse(fs.existsSync(empty), "the empty parent is removed")
    await killHostAfterRegistering(used)
    assert.isTrue(fs.existsSync(other), "another host's cgroup stays")
    assert.isTrue(fs.existsSync(used), "and so does the parent it is in")
  })
})
