/**
 * The launcher's one resolver, on real files: `TOOLCAP_LAUNCHER` first (a named launcher that
 * cannot run is reported, not replaced), else `dist/native/<platform>-<arch>/toolcap-confine` of
 * the package above the loading module, from any depth of it (the bundles' chunks); a file that
 * cannot run here (mode, a noexec mount, another architecture, another platform) is not used and
 * says why. Every temp dir (and the noexec mount) is removed.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Confinement } from "@toolcap/tools"
import * as LauncherPath from "../src/internal/supervisor/launcherPath.js"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-resolve-"))
const mounts: Array<string> = []
afterAll(() => {
  for (const mount of mounts) spawnSync("umount", [mount])
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** An ELF header for `machine` (62 x86-64, 183 aarch64), enough for the architecture check. */
const elf = (machine: number): Buffer => {
  const header = Buffer.alloc(64)
  header.writeUInt32BE(0x7f454c46, 0)
  header.writeUInt16LE(machine, 18)
  return header
}

let packages = 0
/** A package folder (`package.json`) with a launcher file at `dist/native/linux-<arch>/`. */
const packageWith = (arch: string, content: Buffer | undefined, mode = 0o755): string => {
  const root = path.join(tmp, `package-${packages++}`)
  fs.mkdirSync(path.join(root, "dist", "chunks"), { recursive: true })
  fs.writeFileSync(path.join(root, "package.json"), "{}")
  if (content !== undefined) {
    const file = path.join(root, "dist", "native", `linux-${arch}`, "toolcap-confine")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content, { mode })
  }
  return root
}

const resolveFrom = (root: string, overrides: Partial<Parameters<typeof LauncherPath.resolve>[0]> = {}) =>
  LauncherPath.resolve({
    variable: undefined,
    platform: "linux",
    arch: "x64",
    moduleFile: path.join(root, "dist", "chunks", "chunk-ABC.js"),
    ...overrides
  })

describe("the launcher's resolver", () => {
  it("finds the package's own launcher from a module at any depth of the package", () => {
    const root = packageWith("x64", elf(62))
    const file = path.join(root, "dist", "native", "linux-x64", "toolcap-confine")
    assert.deepStrictEqual(resolveFrom(root), { kind: "found", path: file, source: "package" })
    assert.deepStrictEqual(resolveFrom(root, { moduleFile: path.join(root, "dist", "call.cjs") }), {
      kind: "found",
      path: file,
      source: "package"
    })
  })

  it("TOOLCAP_LAUNCHER wins; a named launcher that is missing is reported, not replaced by the package's", () => {
    const root = packageWith("x64", elf(62))
    const named = path.join(packageWith("x64", elf(62)), "dist", "native", "linux-x64", "toolcap-confine")
    assert.deepStrictEqual(resolveFrom(root, { variable: named }), {
      kind: "found",
      path: named,
      source: "variable"
    })
    const missing = resolveFrom(root, { variable: path.join(tmp, "nowhere") })
    assert.strictEqual(missing.kind, "absent")
    assert.include(missing.kind === "absent" ? missing.reason : "", "TOOLCAP_LAUNCHER names")
    // an empty variable is unset
    assert.strictEqual(resolveFrom(root, { variable: "" }).kind, "found")
  })

  it("a package without a launcher for this platform or architecture: absent, with the reason", () => {
    const none = resolveFrom(packageWith("x64", undefined))
    assert.strictEqual(none.kind, "absent")
    const riscv = resolveFrom(packageWith("x64", elf(62)), { arch: "riscv64" })
    assert.strictEqual(riscv.kind, "absent")
    assert.include(riscv.kind === "absent" ? riscv.reason : "", "linux-riscv64")
    const mac = resolveFrom(packageWith("x64", elf(62)), { platform: "darwin" })
    assert.strictEqual(mac.kind, "absent")
    assert.include(mac.kind === "absent" ? mac.reason : "", "only on Linux")
  })

  it("not executable, or built for another architecture: unusable and broken (a reinstall fixes it)", () => {
    const plain = resolveFrom(packageWith("x64", elf(62), 0o644))
    assert.deepInclude(plain, { kind: "unusable", broken: true })
    assert.include(plain.kind === "unusable" ? plain.reason : "", "not executable")
    const arm = resolveFrom(packageWith("x64", elf(183)))
    assert.deepInclude(arm, { kind: "unusable", broken: true })
    assert.include(arm.kind === "unusable" ? arm.reason : "", "another architecture")
    // the same arm64 file is right on arm64
    assert.strictEqual(resolveFrom(packageWith("arm64", elf(183)), { arch: "arm64" }).kind, "found")
  })

  it("a package without its own launcher takes @toolcap/tools' build output beside it, and only that package's", () => {
    const repository = path.join(tmp, `repository-${packages++}`)
    const bundle = path.join(repository, "toolcap")
    const tools = path.join(repository, "tools")
    fs.mkdirSync(path.join(bundle, "dist", "chunks"), { recursive: true })
    fs.writeFileSync(path.join(bundle, "package.json"), JSON.stringify({ name: "toolcap" }))
    const built = path.join(tools, "dist", "native", "linux-x64", "toolcap-confine")
    fs.mkdirSync(path.dirname(built), { recursive: true })
    fs.writeFileSync(built, elf(62), { mode: 0o755 })
    fs.writeFileSync(path.join(tools, "package.json"), JSON.stringify({ name: "@toolcap/tools" }))
    assert.deepStrictEqual(resolveFrom(bundle), { kind: "found", path: built, source: "repository" })
    // another package that happens to sit there as "tools" is never run
    fs.writeFileSync(path.join(tools, "package.json"), JSON.stringify({ name: "tools" }))
    const other = resolveFrom(bundle)
    assert.strictEqual(other.kind, "absent")
    assert.strictEqual(other.path, path.join(bundle, "dist", "native", "linux-x64", "toolcap-confine"))
  })

  it.runIf(process.getuid?.() === 0)(
    "on a noexec mount: unusable, not broken (a fact of the machine)",
    () => {
      const root = packageWith("x64", undefined)
      const native = path.join(root, "dist", "native")
      fs.mkdirSync(native, { recursive: true })
      const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "noexec,size=1m", "tmpfs", native])
      assert.strictEqual(mounted.status, 0, String(mounted.stderr))
      mounts.push(native)
      const file = path.join(native, "linux-x64", "toolcap-confine")
      fs.mkdirSync(path.dirname(file))
      fs.writeFileSync(file, elf(62), { mode: 0o755 })
      const found = resolveFrom(root)
      assert.deepInclude(found, { kind: "unusable", broken: false })
      assert.include(found.kind === "unusable" ? found.reason : "", "noexec")
    }
  )

  it("this process's launcher is the package's build output (or named by the variable)", () => {
    const expected = LauncherPath.resolve({
      variable: process.env[LauncherPath.pathVariable],
      platform: process.platform,
      arch: process.arch,
      moduleFile: path.join(import.meta.dirname, "..", "src", "index.ts")
    })
    assert.deepStrictEqual(Effect.runSync(Confinement.launcher), expected)
    assert.strictEqual(Effect.runSync(Confinement.launcherPath), expected.path)
  })
})
