/**
 * The one /proc reader: the stat parser over any command name, and real processes, descriptors
 * and kernel settings read through it.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { spawn, spawnSync } from "node:child_process"
import { once } from "node:events"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Procfs } from "@toolcap/spill"

const fc = FastCheck
const linux = fs.existsSync("/proc/self/stat")

/** A stat line as the kernel writes it, fields 3..22 and a few after. */
const statLine = (fields: {
  pid: number
  comm: string
  state: string
  ppid: number
  pgid: number
  flags: number
  startTime: number
}) =>
  [
    `${fields.pid} (${fields.comm}) ${fields.state} ${fields.ppid} ${fields.pgid} 0 0 -1 ${fields.flags}`,
    "0 0 0 0 0 0 0 0 20 0 1",
    `0 ${fields.startTime} 1000 100 0\n`
  ].join(" ")

describe("Procfs.parseStat", () => {
  it.prop(
    "reads pid, ppid, group, state, start time and the exiting flag whatever the command name holds",
    {
      pid: fc.integer({ min: 1, max: 4_194_304 }),
      // a command name may hold spaces and parentheses, closing ones included
      comm: fc.string({ maxLength: 15 }).map((s) => s.replace(/\n/g, "")),
      state: fc.constantFrom("R", "S", "D", "Z", "T", "X"),
      ppid: fc.nat({ max: 4_194_304 }),
      pgid: fc.nat({ max: 4_194_304 }),
      flags: fc.nat({ max: 0x7fffffff }),
      startTime: fc.nat()
    },
    (fields) => {
      assert.deepStrictEqual(Procfs.parseStat(fields.pid, statLine(fields)), {
        pid: fields.pid,
        ppid: fields.ppid,
        pgid: fields.pgid,
        state: fields.state,
        startTime: String(fields.startTime),
        exiting: (fields.flags & 0x4) !== 0
      })
    }
  )

  it("answers nothing for a line that is not a stat line", () => {
    assert.isUndefined(Procfs.parseStat(1, ""))
    assert.isUndefined(Procfs.parseStat(1, "1 (sh"))
    assert.isUndefined(Procfs.parseStat(1, "1 (sh) S x 1"))
  })
})

describe.runIf(linux)("Procfs on this machine", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-procfs-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("ticksNowFloor is in start-time units: at most the start of a child forked after it, in the same unit", async () => {
    for (let round = 0; round < 5; round++) {
      const floor = Number(Procfs.ticksNowFloor())
      const child = spawn("sleep", ["30"], { stdio: "ignore" })
      try {
        const started = Number(Procfs.startTimeOf(child.pid!))
        assert.isAtMost(floor, started)
        // the same unit, not milliseconds (floor above it) nor seconds (thousands of ticks below it)
        assert.isAtMost(started - floor, 1000)
      } finally {
        child.kill("SIGKILL")
        await once(child, "exit")
      }
    }
  })

  it("reads a live child (parent, start time, listed) and sees it gone once reaped", async () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" })
    const pid = child.pid!
    try {
      const info = Procfs.readProcess(pid)
      assert.isDefined(info)
      assert.strictEqual(info?.ppid, process.pid)
      assert.strictEqual(Procfs.startTimeOf(pid), info?.startTime)
      assert.isTrue(Procfs.isRunning(pid, info?.startTime))
      // the same pid with another start time is another process
      assert.isFalse(Procfs.isRunning(pid, `${info?.startTime}0`))
      assert.isTrue(Procfs.listProcesses().some((listed) => listed.pid === pid))
      assert.isFalse(Procfs.listProcesses().some((listed) => listed.pid === process.pid))
    } finally {
      child.kill("SIGKILL")
      await once(child, "exit")
    }
    assert.isFalse(Procfs.isRunning(pid, undefined))
    assert.isUndefined(Procfs.readProcess(pid))
  })

  it("reads a variable of a child's initial environment, and nothing for one it lacks", async () => {
    const child = spawn("sleep", ["30"], {
      stdio: "ignore",
      env: { PATH: process.env["PATH"], TOOLCAP_PROCFS_TEST: "a=b" }
    })
    try {
      const info = Procfs.readProcess(child.pid!)
      assert.isDefined(info)
      if (info === undefined) return
      assert.strictEqual(Procfs.environValue(info, "TOOLCAP_PROCFS_TEST"), "a=b")
      assert.isNull(Procfs.environValue(info, "TOOLCAP_PROCFS_ABSENT"))
    } finally {
      child.kill("SIGKILL")
      await once(child, "exit")
    }
  })

  it("names an open descriptor by a path that opens the same file, and reads its real path", () => {
    const file = path.join(dir, "held.txt")
    fs.writeFileSync(file, "held")
    const fd = fs.openSync(file, "r")
    try {
      assert.isTrue(Procfs.hasDescriptorPaths())
      assert.strictEqual(Procfs.descriptorTarget(fd), fs.realpathSync(file))
      assert.strictEqual(fs.readFileSync(Procfs.descriptorPath(fd), "utf8"), "held")
      assert.strictEqual(Procfs.descriptorPath(fd, 42), `/proc/42/fd/${fd}`)
    } finally {
      fs.closeSync(fd)
    }
    assert.isUndefined(Procfs.descriptorTarget(fd))
  })

  it("reads a kernel setting as a number, and nothing for one that does not exist", () => {
    const pidMax = Number(spawnSync("cat", ["/proc/sys/kernel/pid_max"], { encoding: "utf8" }).stdout)
    assert.strictEqual(Procfs.kernelSetting("kernel/pid_max"), pidMax)
    assert.isUndefined(Procfs.kernelSetting("toolcap/no-such-setting"))
  })
})

/** The TypeScript sources below `dir`. */
const sources = (dir: string): Array<string> =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((file) => /\.tsx?$/.test(file))
        .map((file) => path.join(dir, file))
    : []

describe("Procfs is the one /proc reader", () => {
  const repo = fileURLToPath(new URL("../../..", import.meta.url))
  /**
   * Paths under /proc that library code names for another reader: the confined ripgrep's allowed
   * files, and the lifeline watchdog's shell program (a process of its own, outside the host).
   */
  const NAMED_FOR_OTHERS = new Set([
    "packages/tools/src/Confinement.ts:/proc/sys/vm/overcommit_memory",
    "packages/tools/src/internal/supervisor/lifeline.ts:/proc/"
  ])

  it("no library or app source outside Procfs names a /proc path in its code", () => {
    const found = ["packages", "apps"]
      .flatMap((group) =>
        fs.readdirSync(path.join(repo, group)).flatMap((name) => sources(path.join(repo, group, name, "src")))
      )
      .filter((file) => !file.endsWith(path.join("spill", "src", "Procfs.ts")))
      .flatMap((file) =>
        fs
          .readFileSync(file, "utf8")
          .split("\n")
          // comments may say where a path comes from; code may not open one
          .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
          .flatMap((line) => [...line.matchAll(/["'`](\/proc\b[^"'`$]*)/g)].map((match) => match[1]))
          .map((procPath) => `${path.relative(repo, file).split(path.sep).join("/")}:${procPath}`)
      )
    assert.deepStrictEqual(
      found.filter((entry) => !NAMED_FOR_OTHERS.has(entry)),
      [],
      "read /proc through Procfs (packages/spill/src/Procfs.ts)"
    )
    // the scan does see /proc paths in code: the allowed ones are among them
    for (const allowed of NAMED_FOR_OTHERS) assert.include(found, allowed)
  })
})
