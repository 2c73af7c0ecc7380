/**
 * Where the native launcher (`native/confine.c`) is: Landlock confinement and the memory ceiling
 * of ripgrep and the cgroup entry of Bash's shell all run it. One resolver for every entry (the
 * package's sources, its `dist`, and each bundle of the `toolcap` package): `TOOLCAP_LAUNCHER`
 * when set, else `dist/native/<platform>-<arch>/toolcap-confine` of the package this module was
 * loaded from (the nearest folder above it holding a `package.json`: `@toolcap/tools` in this
 * repository, `toolcap` in an install), else the repository's build output of `@toolcap/tools`
 * beside that package. A file there is used only when it can run here.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Settings from "./settings.js"

/**
 * The environment variable naming the launcher, for a host that keeps it elsewhere (e.g. one that
 * bundles toolcap into its own program).
 */
export const pathVariable: "TOOLCAP_LAUNCHER" = Settings.variables.launcher.name

/** ELF's `e_machine` for each architecture a launcher is built for (`native/build.mjs`). */
const ELF_MACHINE: Readonly<Record<string, number>> = { x64: 62, arm64: 183 }

/** Where `e_machine` sits in an ELF header, and the bytes read to see it. */
const ELF_MACHINE_OFFSET = 18
const ELF_HEADER_BYTES = 20

/**
 * The launcher found, or why none is used. `unusable` is a file that exists but cannot run here;
 * `broken` says whether reinstalling would fix it (a lost mode bit, another architecture's
 * binary), as opposed to a fact of this machine (a `noexec` mount).
 */
export type Resolved =
  | { readonly kind: "found"; readonly path: string; readonly source: Source }
  | { readonly kind: "absent"; readonly path: string; readonly reason: string }
  | { readonly kind: "unusable"; readonly path: string; readonly reason: string; readonly broken: boolean }

/**
 * Where a launcher was found: named by the variable, the running package's own, or (a bundle of
 * this repository built before the launcher was copied into it) the repository's build output.
 */
export type Source = "variable" | "package" | "repository"

/** The package whose build output holds the launcher in this repository. */
const TOOLS_PACKAGE = "@toolcap/tools"

/** The nearest folder at or above `dir` that holds a `package.json`, if any. */
const packageRoot = (dir: string): string | undefined => {
  for (let at = dir; ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, "package.json"))) return at
    if (path.dirname(at) === at) return undefined
  }
}

/** The architecture an ELF file was built for, by `e_machine`; undefined when unreadable. */
const elfMachine = (file: string): number | undefined => {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, "r")
    const header = Buffer.alloc(ELF_HEADER_BYTES)
    if (fs.readSync(fd, header, 0, ELF_HEADER_BYTES, 0) < ELF_HEADER_BYTES) return undefined
    if (header.readUInt32BE(0) !== 0x7f454c46) return undefined
    return header.readUInt16LE(ELF_MACHINE_OFFSET)
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** Whether `file` can run here, or why not. */
const check = (file: string, source: Source, arch: string): Resolved => {
  let stats: fs.Stats
  try {
    stats = fs.statSync(file)
  } catch {
    return {
      kind: "absent",
      path: file,
      reason:
        source === "variable"
          ? `${pathVariable} names ${file}, which does not exist`
          : `no launcher at ${file} (none built for this platform, or no C compiler at build time)`
    }
  }
  if (!stats.isFile())
    return { kind: "unusable", path: file, reason: `${file} is not a regular file`, broken: true }
  if ((stats.mode & 0o111) === 0) {
    return {
      kind: "unusable",
      path: file,
      reason: `${file} is not executable (chmod +x it, or reinstall)`,
      broken: true
    }
  }
  try {
    // on Linux this also fails on a file system mounted noexec
    fs.accessSync(file, fs.constants.X_OK)
  } catch {
    return {
      kind: "unusable",
      path: file,
      reason: `${file} cannot be executed here (its file system is mounted noexec, or a security policy forbids it)`,
      broken: false
    }
  }
  const machine = elfMachine(file)
  const expected = ELF_MACHINE[arch]
  if (machine !== undefined && expected !== undefined && machine !== expected) {
    return {
      kind: "unusable",
      path: file,
      reason: `${file} is built for another architecture than ${arch} (reinstall, or rebuild it here)`,
      broken: true
    }
  }
  return { kind: "found", path: file, source }
}

/**
 * Resolves the launcher: `variable` (the value of `TOOLCAP_LAUNCHER`; empty is unset) names it
 * outright (a named launcher that cannot run is reported, never replaced by another), else the
 * package's own build output for `platform`-`arch`, from the package above `moduleFile`, else
 * (none there) the build output of `@toolcap/tools` beside that package in this repository.
 */
export const resolve = (input: {
  readonly variable: string | undefined
  readonly platform: string
  readonly arch: string
  readonly moduleFile: string
}): Resolved => {
  if (input.variable !== undefined && input.variable !== "")
    return check(path.resolve(input.variable), "variable", input.arch)
  const root = packageRoot(path.dirname(input.moduleFile)) ?? path.dirname(input.moduleFile)
  const file = path.join(root, "dist", "native", `${input.platform}-${input.arch}`, "toolcap-confine")
  if (input.platform !== "linux") {
    return { kind: "absent", path: file, reason: `the launcher runs only on Linux, not ${input.platform}` }
  }
  if (ELF_MACHINE[input.arch] === undefined) {
    return {
      kind: "absent",
      path: file,
      reason: `no launcher is built for linux-${input.arch} (only linux-x64 and linux-arm64)`
    }
  }
  const own = check(file, "package", input.arch)
  if (own.kind !== "absent") return own
  // beside it in this repository, the tools package's build output (never another package's)
  const tools = path.join(path.dirname(root), "tools")
  if (packageName(tools) !== TOOLS_PACKAGE || path.resolve(tools) === path.resolve(root)) return own
  const built = check(
    path.join(tools, "dist", "native", `${input.platform}-${input.arch}`, "toolcap-confine"),
    "repository",
    input.arch
  )
  return built.kind === "absent" ? own : built
}

/** The `name` of the package at `dir`, if it has a readable `package.json`. */
const packageName = (dir: string): string | undefined => {
  try {
    return (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: string }).name
  } catch {
    return undefined
  }
}

/**
 * The launcher of this process, with `variable` the value of `TOOLCAP_LAUNCHER` (undefined: unset).
 * Reads files, so it runs when a layer (or a caller) asks, never when the module loads.
 */
export const here = (variable: string | undefined): Resolved =>
  import.meta.url.startsWith("file:")
    ? resolve({
        variable,
        platform: process.platform,
        arch: process.arch,
        moduleFile: fileURLToPath(import.meta.url)
      })
    : // loaded from something other than a file (a host's own bundler): only the variable can name it
      variable !== undefined && variable !== ""
      ? resolve({ variable, platform: process.platform, arch: process.arch, moduleFile: "/" })
      : {
          kind: "absent",
          path: "toolcap-confine",
          reason: `toolcap was not loaded from a file, so its launcher cannot be found beside it (${pathVariable} names one)`
        }
