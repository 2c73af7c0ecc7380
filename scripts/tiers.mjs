// The machine tier `pnpm test` must prove, and the check that the guarded suites ran where the
// machine offers what they need. Several suites run only where a mechanism exists (a cgroup v2
// parent, the native launcher, Landlock scopes, root, an unprivileged user to switch to): a
// `runIf`/`skipIf` guard keeps them green elsewhere, so on its own a run cannot tell "proved" from
// "skipped". This module detects the tier independently of the tests, prints it, and after the run
// compares: a guarded suite whose tier is present here and that did not run (skipped, or missing
// from the report) is a failure. A machine without a tier still passes: its fallback suites run
// and the printed tier names what is absent.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"

/** Whether `cmd` is on PATH. */
const onPath = (cmd) => spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0

/** The cgroup2 mount point from /proc/self/mountinfo (field 5 of the line whose fs type is cgroup2). */
const cgroup2Mount = () => {
  try {
    return fs
      .readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .find((fields) => fields[fields.indexOf("-") + 1] === "cgroup2")?.[4]
  } catch {
    return undefined
  }
}

/**
 * Whether a call cgroup parent can be made under the cgroup2 mount as the runner makes it
 * (`toolcap` under this process's own cgroup, else under the mount's root) and has `cgroup.kill`.
 * Made and removed again, as the tests' own probe does.
 */
const cgroup2Parent = (mount) => {
  if (mount === undefined) return false
  let own = "/"
  try {
    own =
      fs
        .readFileSync("/proc/self/cgroup", "utf8")
        .split("\n")
        .find((line) => line.startsWith("0::"))
        ?.slice(3) ?? "/"
  } catch {
    // no cgroup file: the mount's root is the only candidate
  }
  return [path.join(mount, own, "toolcap"), path.join(mount, "toolcap")].some((dir) => {
    try {
      fs.mkdirSync(dir, { recursive: true })
      return fs.existsSync(path.join(dir, "cgroup.procs")) && fs.existsSync(path.join(dir, "cgroup.kill"))
    } catch {
      return false
    } finally {
      try {
        fs.rmdirSync(dir)
      } catch {
        // in use by a call of another host, or never made
      }
    }
  })
}

/** The launcher `pnpm run build` makes (packages/tools/native/build.mjs), when it can run here. */
const launcherFile = (root) => {
  const file = path.join(
    root,
    "packages/tools/dist/native",
    `${process.platform}-${process.arch}`,
    "toolcap-confine"
  )
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return file
  } catch {
    return undefined
  }
}

/**
 * Detects what this machine offers. Each tier is a name the guard table below uses; the value is
 * whether the machine has it.
 */
export const detectTiers = (root) => {
  const linux = fs.existsSync("/proc/self/stat")
  const isRoot = process.getuid?.() === 0
  const mount = linux ? cgroup2Mount() : undefined
  const launcher = launcherFile(root)
  const abi =
    launcher === undefined ? 0 : Number(spawnSync(launcher, ["--probe"], { encoding: "utf8" }).stdout.trim())
  const [major = 0, minor = 0] = os.release().split(".").map(Number)
  return {
    linux,
    root: isRoot,
    "cgroup2 mount": mount !== undefined,
    "cgroup2 parent": cgroup2Parent(mount),
    launcher: launcher !== undefined,
    // clone3 with CLONE_INTO_CGROUP (the launcher's cgroup entry) exists from Linux 5.7 on
    clone3: linux && (major > 5 || (major === 5 && minor >= 7)),
    landlock: abi >= 1,
    // Landlock scopes (signals, abstract sockets) exist from ABI 6 on
    "landlock scopes": abi >= 6,
    "cgroup v1 freezer": fs.existsSync("/sys/fs/cgroup/freezer/cgroup.procs"),
    // a user to switch to: root makes one with useradd and enters it with setpriv
    "unprivileged user": isRoot && onPath("useradd") && onPath("userdel") && onPath("setpriv"),
    compiler: spawnSync("cc", ["--version"], { stdio: "ignore" }).status === 0,
    ...Object.fromEntries(
      ["node", "python3", "cargo", "gcc", "git", "npm", "make"].map((cmd) => [`${cmd}`, onPath(cmd)])
    )
  }
}

/**
 * Every guarded suite: its file, a part of its tests' full names (describe titles and test title
 * joined by spaces) that selects them, and the tiers under which its guard lets it run. Where all
 * of `needs` are present here, at least one selected test must be in the report and none skipped.
 * A guard that asks for less than listed here is fine (this is the least the machine must prove);
 * one that asks for more skips where the table says it must run, and fails the run.
 */
export const GUARDS = [
  {
    file: "packages/tools/test/containment.test.ts",
    name: "a shell that moves itself out of the call's cgroup",
    needs: ["cgroup2 parent", "root"]
  },
  {
    file: "packages/tools/test/containment.test.ts",
    name: "cgroup tier: a dead host's call cgroup is killed and removed",
    needs: ["cgroup2 parent"]
  },
  {
    file: "packages/tools/test/containment.test.ts",
    name: "a call that moves into cgroups it made inside its own",
    needs: ["cgroup2 parent"]
  },
  { file: "packages/tools/test/containment.test.ts", name: "cgroup tier", needs: ["cgroup2 parent"] },
  {
    file: "packages/tools/test/fallback.test.ts",
    name: "a call that moves into cgroups it made inside its own",
    needs: ["cgroup2 parent"]
  },
  {
    file: "packages/tools/test/fallback.test.ts",
    name: "cgroup tier, no launcher",
    needs: ["cgroup2 parent"]
  },
  {
    file: "packages/tools/test/cgroupEntry.test.ts",
    name: "the launcher where it is built and the kernel has clone3",
    needs: ["cgroup2 parent"]
  },
  {
    file: "packages/tools/test/cgroupEntry.test.ts",
    name: "SIGTERM to the launcher reaches the shell",
    needs: ["cgroup2 parent", "launcher", "clone3"]
  },
  {
    file: "packages/tools/test/cgroupEntry.test.ts",
    name: "the launcher server",
    needs: ["cgroup2 parent", "launcher", "clone3"]
  },
  {
    file: "packages/tools/test/cgroupEntry.test.ts",
    name: "is made with the first call cgroup and removed with the last",
    needs: ["cgroup2 parent"]
  },
  {
    file: "packages/tools/test/cgroupfs.test.ts",
    name: "the stop never signals what the call did not start",
    needs: ["cgroup2 parent", "root"]
  },
  {
    file: "packages/tools/test/cgroupfs.test.ts",
    name: "frozen by the cgroup v1 freezer",
    needs: ["cgroup2 parent", "root", "cgroup v1 freezer"]
  },
  {
    file: "packages/tools/test/delegated.test.ts",
    name: "cgroupfs attacks as an unprivileged user in a delegated cgroup",
    needs: ["cgroup2 mount", "root", "unprivileged user"]
  },
  {
    file: "packages/tools/test/launcher.test.ts",
    name: "toolcap-confine --scope",
    needs: ["launcher", "landlock scopes"]
  },
  { file: "packages/tools/test/launcher.test.ts", name: "toolcap-confine --memory", needs: ["launcher"] },
  {
    file: "packages/tools/test/launcher.test.ts",
    name: "the launcher's build",
    needs: ["linux", "compiler"]
  },
  {
    file: "packages/tools/test/launcherResolve.test.ts",
    name: "on a noexec mount: unusable, not broken",
    needs: ["root"]
  },
  {
    file: "packages/tools/test/lifeline.test.ts",
    name: "the lifeline after its host is killed (cgroup v2)",
    needs: ["cgroup2 parent"]
  },
  {
    file: "packages/tools/test/callBounds.test.ts",
    name: "under a 256 MiB ceiling does not succeed and leaves nothing pinned",
    needs: ["cgroup2 parent"]
  },
  { file: "packages/tools/test/callBounds.test.ts", name: "cgroup tier", needs: ["cgroup2 parent"] },
  {
    file: "packages/tools/test/reliability.isolation.test.ts",
    name: "a call cannot write cgroupfs, nor read the host's /proc",
    needs: ["cgroup2 parent", "launcher", "root"]
  },
  {
    file: "packages/tools/test/reliability.isolation.test.ts",
    name: "as an unprivileged user in a delegated cgroup",
    needs: ["cgroup2 mount", "launcher", "unprivileged user"]
  },
  {
    file: "packages/tools/test/reliability.bounds.test.ts",
    name: "reliability: cgroupfs and bounds attacks",
    needs: ["cgroup2 parent", "root"]
  },
  {
    file: "packages/tools/test/reliability.nested.test.ts",
    name: "reliability: nested-cgroup escapes",
    needs: ["cgroup2 parent"]
  },
  { file: "packages/spill/test/Procfs.test.ts", name: "Procfs on this machine", needs: ["linux"] },
  {
    file: "packages/adapters/test/unprivileged.input.test.ts",
    name: "the secret stays out unless included",
    needs: ["unprivileged user"]
  },
  {
    file: "apps/demo/test/reliability.reach.test.ts",
    name: "tier, launcher: signals, /proc and pidfd_getfd denied",
    needs: ["launcher", "landlock scopes"]
  },
  {
    file: "packages/digest/test/recognisers.test.ts",
    name: "pip: an install that cannot resolve",
    needs: ["python3"]
  },
  {
    file: "packages/digest/test/recognisers.test.ts",
    name: "",
    needs: ["node", "python3", "cargo", "gcc", "git", "npm", "make"]
  }
]

/** The lines that state the tier: what the machine offers and what is absent. */
export const describeTiers = (tiers) => {
  const names = Object.keys(tiers)
  const present = names.filter((n) => tiers[n])
  const absent = names.filter((n) => !tiers[n])
  return [
    `machine tier: ${present.join(", ") || "none"}`,
    `absent here (their suites' fallbacks run instead): ${absent.join(", ") || "none"}`
  ]
}

const RAN = new Set(["passed", "failed"])

/**
 * Compares the vitest JSON report with the tier: one line per guard, and the guards that should
 * have run here and did not. A guard whose tier is absent is listed as "not required here".
 */
export const checkGuards = (root, tiers, report, guards = GUARDS) => {
  const lines = []
  const missed = []
  for (const guard of guards) {
    const file = path.join(root, guard.file)
    const tests = report.testResults
      .filter((f) => path.resolve(f.name) === file)
      .flatMap((f) => f.assertionResults)
      .filter((a) => [...a.ancestorTitles, a.title].join(" ").includes(guard.name))
    const ran = tests.filter((a) => RAN.has(a.status)).length
    const required = guard.needs.every((tier) => tiers[tier])
    const label = `${guard.file} "${guard.name || "(every test)"}" needs ${guard.needs.join(" + ")}`
    if (!required) {
      lines.push(`  not required here: ${label} (ran ${ran} of ${tests.length})`)
    } else if (tests.length === 0 || ran < tests.length) {
      missed.push(label)
      lines.push(`  SKIPPED where the tier exists: ${label} (ran ${ran} of ${tests.length})`)
    } else {
      lines.push(`  ran: ${label} (${ran} tests)`)
    }
  }
  return { lines, missed }
}
