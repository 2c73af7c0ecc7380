/**
 * Loads a CommonJS bundle through a V8 code cache, so a process that runs it again skips
 * compiling it. Node 20 has no compile cache for modules (`module.enableCompileCache` is Node
 * 22), so the bundle is compiled as a `vm.Script` with `cachedData`. The cache is written once,
 * when the process exits after a first run: it then holds the functions that run compiled too.
 * A cache that is missing, stale (another bundle or V8) or unwritable only costs the compile.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as vm from "node:vm"

/** Where code caches live: the user's cache directory, else a per-user folder in the temp dir. */
const cacheDir = (): string => {
  const xdg = process.env["XDG_CACHE_HOME"]
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, "toolcap")
  const home = os.homedir()
  return home.length > 0
    ? path.join(home, ".cache", "toolcap")
    : path.join(os.tmpdir(), `toolcap-${os.userInfo().uid}`)
}

/** FNV-1a's published 64-bit offset basis and prime. */
const FNV_OFFSET = 0xcbf29ce484222325n
const FNV_PRIME = 0x100000001b3n

/**
 * A 64-bit FNV-1a hash of `text` as 16 hex digits: names a cache file. Not node:crypto, whose
 * loading alone costs a few milliseconds of every call; nothing here needs a cryptographic hash.
 *
 * @internal
 */
export const fnv1a64 = (text: string): string => {
  let hash = FNV_OFFSET
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i))
    hash = BigInt.asUintN(64, hash * FNV_PRIME)
  }
  return hash.toString(16).padStart(16, "0")
}

const writeCache = (file: string, data: Buffer): void => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const partial = `${file}.${process.pid}`
    fs.writeFileSync(partial, data)
    fs.renameSync(partial, file)
  } catch {
    // a read-only home or a full disk: the next run compiles again
  }
}

/**
 * Runs the CommonJS bundle `file` (ASCII only: read as latin1, the cheapest decoding) and answers
 * its exports. `import()` inside the bundle (it is
 * rewritten to `__toolcapImport` at build) resolves like an import from `file`'s folder.
 *
 * @since 0.1.0
 */
export const load = <A>(file: string, dynamicImport: (specifier: string) => Promise<unknown>): A => {
  const source = fs.readFileSync(file, "latin1")
  // the bundle's identity without hashing 600KB on every start: where it is, its size and time
  const stat = fs.statSync(file)
  const key = fnv1a64(`${process.version} ${process.arch} ${file} ${stat.size} ${stat.mtimeMs} ${stat.ino}`)
  const cacheFile = path.join(cacheDir(), `code-${key}.v8`)
  let cachedData: Buffer | undefined
  try {
    cachedData = fs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname, __toolcapImport) {${source}\n})`
  const script = new vm.Script(wrapped, {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData })
  })
  if (cachedData === undefined || script.cachedDataRejected === true) {
    process.once("exit", () => writeCache(cacheFile, script.createCachedData()))
  }
  const run = script.runInThisContext() as (...args: ReadonlyArray<unknown>) => void
  const module = { exports: {} as A }
  // Module initialisers that probe `new Error().stack` (effect does, once) would format the
  // first stack trace of the process, the costliest: without frames they read a bare message.
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    run.call(
      module.exports,
      module.exports,
      createRequire(file),
      module,
      file,
      path.dirname(file),
      dynamicImport
    )
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
  return module.exports
}
