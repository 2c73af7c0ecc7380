// Bundles the package with esbuild: effect and every @toolcap/* package inside (so it installs
// beside any effect version, or none), `ai` and `@modelcontextprotocol/sdk` left as optional
// peers the code imports lazily, `better-sqlite3` behind a shim that loads it on first use; and
// ships the native launchers built by @toolcap/tools (`dist/native/linux-<arch>/toolcap-confine`).
import * as esbuild from "esbuild"
import crypto from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { entries, writeDeclarations } from "./declarations.mjs"

const root = path.resolve(import.meta.dirname, "..")
const out = path.join(root, "dist")
fs.rmSync(out, { recursive: true, force: true })

const optionalSqlite = {
  name: "optional-better-sqlite3",
  setup(build) {
    build.onResolve({ filter: /^better-sqlite3$/ }, (args) =>
      args.importer.includes(`${path.sep}src${path.sep}optional${path.sep}`)
        ? { path: "better-sqlite3", external: true }
        : { path: path.join(root, "src", "optional", "better-sqlite3.ts") }
    )
  }
}

/**
 * For the `call` bundle: Node modules a Read never uses, loaded on first property access instead
 * of when the bundle starts (`node:crypto` alone costs a few milliseconds of every call; the
 * platform's file system imports it for temp file names, Bash's process code for
 * `node:child_process`, its launcher server `node:net`). Each becomes a CommonJS module whose exports are getters, one per export
 * name of this Node's module (Node 20's names are the same on the machine that runs the bundle).
 */
const lazyBuiltins = ["node:crypto", "node:child_process", "node:net"]
const lazyBuiltin = {
  name: "lazy-builtin",
  setup(build) {
    const pattern = new RegExp(`^(${lazyBuiltins.map((m) => m.replace(":", "\\:")).join("|")})$`)
    build.onResolve({ filter: pattern }, (args) =>
      args.namespace === "lazy-builtin"
        ? { path: args.path, external: true }
        : { path: args.path, namespace: "lazy-builtin" }
    )
    build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, async (args) => {
      const names = Object.keys(await import(args.path)).filter((name) => name !== "default")
      return {
        loader: "js",
        contents: `let loaded
const load = () => (loaded ??= require(${JSON.stringify(args.path)}))
for (const name of ${JSON.stringify(names)})
  Object.defineProperty(exports, name, { enumerable: true, get: () => load()[name] })
`
      }
    })
  }
}

/**
 * For the `call` bundle: effect's logger module reads `process.stdout` when it loads (to pick the
 * pretty logger's colours), and that first read makes Node build the stdout stream — for a pipe a
 * socket, with Node's stream and net modules — which a call never uses (its answer is written to
 * fd 1 directly). The two constants are computed without the stream instead: Node always has a
 * stdout, and whether it is a terminal is read from what fd 1 links to (`tty.isatty` would load
 * node:tty, which loads net). The build fails if effect's source no longer has them, so an
 * upgrade cannot silently drop this.
 */
const stdoutIsTerminal = `() => {
  try {
    return /^\\/dev\\/(pts\\/|tty)/.test(require("node:fs").readlinkSync("/proc/self/fd/1"))
  } catch {
    return false
  }
}`
const loggerStdout = {
  name: "logger-stdout",
  setup(build) {
    build.onLoad({ filter: /[\\/]effect[\\/]dist[\\/]esm[\\/]internal[\\/]logger\.js$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, "utf8")
      const replacements = [
        [
          'const hasProcessStdout = typeof process === "object" && process !== null && typeof process.stdout === "object" && process.stdout !== null;',
          'const hasProcessStdout = typeof process === "object" && process !== null;'
        ],
        [
          "const processStdoutIsTTY = hasProcessStdout && process.stdout.isTTY === true;",
          `const processStdoutIsTTY = hasProcessStdout && (${stdoutIsTerminal})();`
        ]
      ]
      let contents = source
      for (const [from, to] of replacements) {
        if (!contents.includes(from)) throw new Error(`${args.path} no longer has: ${from}`)
        contents = contents.replace(from, to)
      }
      return { contents, loader: "js" }
    })
  }
}

/**
 * For the `call` bundle: the checkpoint package (transcript codecs, SQL stores), which the host
 * imports only when a checkpoint is built or read — never in `toolcap call`. Left out, the bundle
 * is smaller to read and its modules are not wrapped for lazy initialisation.
 */
const noCheckpoint = {
  name: "no-checkpoint",
  setup(build) {
    build.onResolve({ filter: /^@toolcap\/checkpoint$/ }, () => ({
      path: "checkpoint",
      namespace: "no-checkpoint"
    }))
    build.onLoad({ filter: /.*/, namespace: "no-checkpoint" }, () => ({
      loader: "js",
      contents:
        'throw new Error("toolcap call does not checkpoint: the checkpoint package is not in its bundle")\n'
    }))
  }
}

/** What both bundles share. */
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  target: "node20",
  conditions: ["@toolcap/source"],
  // optional peers (loaded lazily), and the dependency that cannot be inlined: ripgrep's binary
  // package
  external: ["ai", "@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*", "@vscode/ripgrep"],
  plugins: [optionalSqlite],
  legalComments: "none",
  // smaller to parse: every call of the bin compiles what it loads
  minify: true,
  logLevel: "warning"
}

await esbuild.build({
  ...common,
  entryPoints: {
    ...Object.fromEntries(entries.map((entry) => [entry, `src/${entry}.ts`])),
    cli: path.join(root, "..", "..", "apps", "demo", "src", "Cli.ts")
  },
  outdir: out,
  splitting: true,
  format: "esm",
  // some bundled CommonJS dependencies call require() for Node's own modules
  banner: {
    js: 'import { createRequire as __toolcapRequire } from "node:module"; const require = __toolcapRequire(import.meta.url);'
  },
  chunkNames: "chunks/[name]-[hash]"
})

/** What every CommonJS output shares: `import.meta.url` becomes the file's own URL. */
const commonCjs = {
  ...common,
  format: "cjs",
  define: { "import.meta.url": "__toolcapUrl" },
  banner: { js: 'var __toolcapUrl = require("node:url").pathToFileURL(__filename).href;' }
}

/**
 * A fast-path entry as one CommonJS file, which the bin compiles with a V8 code cache (Node 20 has
 * none for ES modules). `import.meta.url` becomes the file's URL; `import()` of what stays outside
 * (the optional peers, ripgrep) goes through the loader's own dynamic import.
 */
const cjsEntry = async (name, entry, plugins) => {
  const file = path.join(out, `${name}.cjs`)
  await esbuild.build({
    ...commonCjs,
    entryPoints: [path.join(root, "..", "..", "apps", "demo", "src", "internal", entry)],
    outfile: file,
    plugins: [...common.plugins, ...plugins],
    // non-ASCII escaped, so the loader reads the file as latin1
    charset: "ascii"
  })
  const dynamicImport = /\bimport\((?=["'`])/g
  fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(dynamicImport, "__toolcapImport("))
}
// `toolcap call`
await cjsEntry("call", "call.ts", [lazyBuiltin, loggerStdout, noCheckpoint])
// a plain `toolcap checkpoint build` (no tools, no command-line framework)
await cjsEntry("checkpoint", "checkpointBuild.ts", [lazyBuiltin, loggerStdout])

// the bin as CommonJS: Node starts a CommonJS main without initialising its ES module loader
// (about 15 ms of every call); `cli.js` (ES module, above) is imported only when needed
const binFile = path.join(out, "bin.cjs")
await esbuild.build({ ...commonCjs, entryPoints: ["src/bin.ts"], outfile: binFile })
fs.chmodSync(binFile, 0o755)
// the viewer's front end (`toolcap ui`, `mcp --ui`), served from dist/ui beside the bundle
fs.cpSync(path.join(root, "../viewer/dist/ui"), path.join(out, "ui"), { recursive: true })
writeDeclarations(root)

/** The architectures the package ships a launcher for (the ones `native/build.mjs` builds). */
const LAUNCHER_ARCHES = ["x64", "arm64"]

// the launchers @toolcap/tools built (static, reproducible), where every bundle's resolver looks:
// the package's own dist/native/linux-<arch>/
const launchers = path.join(root, "..", "tools", "dist", "native")
for (const arch of LAUNCHER_ARCHES) {
  const from = path.join(launchers, `linux-${arch}`, "toolcap-confine")
  if (!fs.existsSync(from)) {
    console.warn(
      `toolcap: no launcher for linux-${arch} at ${from} (no C compiler for it at build time): hosts on linux-${arch} run the fallbacks`
    )
    continue
  }
  const to = path.join(out, "native", `linux-${arch}`, "toolcap-confine")
  fs.mkdirSync(path.dirname(to), { recursive: true })
  fs.copyFileSync(from, to)
  fs.chmodSync(to, 0o755)
  const sha256 = crypto.createHash("sha256").update(fs.readFileSync(to)).digest("hex")
  console.log(
    `toolcap: ships linux-${arch} toolcap-confine, sha256 ${sha256} (${fs.statSync(to).size} bytes)`
  )
}
