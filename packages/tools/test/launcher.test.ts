// The native launcher on its own (native/confine.c): a scoped program cannot reach processes
// outside its Landlock domain (signals, ptrace-class access through /proc and pidfd_getfd) while
// its own children stay within reach; a memory ceiling makes an allocation fail instead of growing;
// the build is reproducible and covers both Linux architectures where their compilers exist.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Arr from "effect/Array"
import * as Order from "effect/Order"
import { spawn, spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Confinement } from "@toolcap/tools"

const launcher = Effect.runSync(Confinement.launcherPath)
const built = fs.existsSync(launcher)
const abi = built ? Number(spawnSync(launcher, ["--probe"], { encoding: "utf8" }).stdout.trim()) : 0
/** Landlock scopes exist from ABI 6 on. */
const scopes = abi >= 6

const run = (args: ReadonlyArray<string>, script: string, env: Record<string, string> = {}) =>
  spawnSync(launcher, [...args, "--", "/bin/sh", "-c", script], {
    encoding: "utf8",
    env: { ...process.env, ...env }
  })

describe.runIf(built && scopes)("toolcap-confine --scope", () => {
  it("cannot signal the host or a process outside its domain; can signal its own children", () => {
    const outsider = spawn("sleep", ["1000.71"], { stdio: "ignore" })
    try {
      const r = run(
        ["--scope"],
        [
          'kill -0 "$HOST" 2>/dev/null && echo host:reached || echo host:denied',
          'kill -TERM "$OUTSIDER" 2>/dev/null && echo outsider:reached || echo outsider:denied',
          "sleep 1000.72 & child=$!",
          'kill -TERM "$child" && echo child:reached',
          'wait "$child"; echo "child:$?"'
        ].join("\n"),
        { HOST: String(process.pid), OUTSIDER: String(outsider.pid) }
      )
      assert.strictEqual(r.status, 0, r.stderr)
      assert.deepStrictEqual(r.stdout.trim().split("\n"), [
        "host:denied",
        "outsider:denied",
        "child:reached",
        "child:143"
      ])
      assert.strictEqual(outsider.exitCode, null)
      assert.strictEqual(outsider.signalCode, null)
    } finally {
      outsider.kill("SIGKILL")
    }
  })

  it("cannot open the host's descriptors or memory through /proc, nor take one with pidfd_getfd", () => {
    const python = [
      "import ctypes, os, sys",
      "host = int(os.environ['HOST'])",
      "def attempt(label, f):",
      "    try:",
      "        f(); print(label + ':reached')",
      "    except OSError as e:",
      "        print(label + ':' + ('denied' if e.errno in (1, 13) else 'errno%d' % e.errno))",
      "hostfd = int(os.environ['HOST_FD'])",
      "attempt('fd', lambda: os.close(os.open('/proc/%d/fd/%d' % (host, hostfd), os.O_RDONLY)))",
      "attempt('mem', lambda: os.close(os.open('/proc/%d/mem' % host, os.O_RDONLY)))",
      "ownfd = os.open('/etc/hostname', os.O_RDONLY)",
      "attempt('own', lambda: os.close(os.open('/proc/self/fd/%d' % ownfd, os.O_RDONLY)))",
      "libc = ctypes.CDLL(None, use_errno=True)",
      "pidfd = os.pidfd_open(host)",
      "def getfd():",
      "    fd = libc.syscall(438, pidfd, 0, 0)",
      "    if fd < 0: raise OSError(ctypes.get_errno(), 'pidfd_getfd')",
      "    os.close(fd)",
      "attempt('getfd', getfd)"
    ].join("\n")
    // a descriptor of the host's that it could otherwise reopen: a regular file
    const hostFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-scope-")), "held")
    fs.writeFileSync(hostFile, "the host's\n")
    const held = fs.openSync(hostFile, "r")
    const env = { ...process.env, HOST: String(process.pid), HOST_FD: String(held) }
    try {
      const r = spawnSync(launcher, ["--scope", "--", "python3", "-c", python], { encoding: "utf8", env })
      assert.strictEqual(r.status, 0, r.stderr)
      assert.deepStrictEqual(r.stdout.trim().split("\n"), [
        "fd:denied",
        "mem:denied",
        "own:reached",
        "getfd:denied"
      ])
      // the same program unscoped reaches the host: the denials above are the scope's doing
      const bare = spawnSync("python3", ["-c", python], { encoding: "utf8", env })
      assert.deepStrictEqual(bare.stdout.trim().split("\n"), [
        "fd:reached",
        "mem:reached",
        "own:reached",
        "getfd:reached"
      ])
    } finally {
      fs.closeSync(held)
      fs.rmSync(path.dirname(hostFile), { recursive: true, force: true })
    }
  })

  it("a file it may read stays readable and what it starts inherits the domain", () => {
    const r = run(
      ["--scope"],
      'head -c 5 /etc/hostname >/dev/null && echo read:ok; sh -c "kill -0 $HOST 2>/dev/null || echo nested:denied"',
      {
        HOST: String(process.pid)
      }
    )
    assert.deepStrictEqual(r.stdout.trim().split("\n"), ["read:ok", "nested:denied"])
  })
})

/** A Python program allocating `mib` MiB under a 128 MiB ceiling. */
const allocate = (mib: number) =>
  spawnSync(
    launcher,
    [
      "--memory",
      String(128 * 1024 * 1024),
      "--",
      "python3",
      "-c",
      `x = bytearray(${mib} * 1024 * 1024); print(len(x))`
    ],
    { encoding: "utf8" }
  )

describe.runIf(built)("toolcap-confine --memory", () => {
  it("an allocation past the ceiling fails inside the program; under it the same program runs", () => {
    const over = allocate(512)
    assert.notStrictEqual(over.status, 0)
    assert.include(over.stderr, "MemoryError")
    const under = allocate(16)
    assert.strictEqual(under.status, 0, under.stderr)
    assert.strictEqual(under.stdout.trim(), String(16 * 1024 * 1024))
  })

  it("refuses a malformed ceiling without running anything", () => {
    for (const value of ["0", "-1", "12x", ""]) {
      const r = spawnSync(launcher, ["--memory", value, "--", "/bin/sh", "-c", "echo ran"], {
        encoding: "utf8"
      })
      assert.strictEqual(r.status, 125, value)
      assert.notInclude(r.stdout, "ran")
    }
  })
})

const buildScript = fileURLToPath(new URL("../native/build.mjs", import.meta.url))
const hasCompiler = spawnSync("cc", ["--version"], { stdio: "ignore" }).status === 0

/** The ELF header's machine (62 x86-64, 183 AArch64) and whether a program interpreter is named (dynamic). */
const elf = (file: string): { readonly machine: number; readonly dynamic: boolean } => {
  const bytes = fs.readFileSync(file)
  assert.strictEqual(bytes.subarray(0, 4).toString("latin1"), "\x7fELF")
  const phoff = Number(bytes.readBigUInt64LE(0x20))
  const phentsize = bytes.readUInt16LE(0x36)
  const phnum = bytes.readUInt16LE(0x38)
  let dynamic = false
  for (let i = 0; i < phnum; i++) if (bytes.readUInt32LE(phoff + i * phentsize) === 3) dynamic = true
  return { machine: bytes.readUInt16LE(0x12), dynamic }
}

describe.runIf(hasCompiler && process.platform === "linux")("the launcher's build", () => {
  it("is reproducible: two builds from different directories give the same bytes", () => {
    const dirs = [
      fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-build-a-")),
      fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-build-b-"))
    ]
    try {
      const digests = dirs.map((dir) => {
        const r = spawnSync(process.execPath, [buildScript, "--out", dir], { encoding: "utf8" })
        assert.strictEqual(r.status, 0, r.stderr)
        const found = Arr.sort(fs.readdirSync(dir), Order.string)
        assert.include(found, `linux-${process.arch}`)
        return found.map((arch) => {
          const file = path.join(dir, arch, "toolcap-confine")
          const { machine, dynamic } = elf(file)
          assert.strictEqual(machine, arch === "linux-arm64" ? 183 : 62, arch)
          assert.isFalse(dynamic, `${arch} is static`)
          return `${arch} ${crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")}`
        })
      })
      assert.deepStrictEqual(digests[0], digests[1])
    } finally {
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
