/**
 * Fixtures of the Read, Glob and Grep tests: real temp workspaces, data dirs and external roots
 * (removed afterwards), files written with chosen modification times, and ripgrep run directly as
 * an independent oracle.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { rgPath } from "@vscode/ripgrep"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { FileIndex, LineIndex, Supervisor, Workspace } from "@toolcap/tools"

export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

export type Env =
  Budgets.Budgets | Scratch.Scratch | Workspace.Workspace | LineIndex.LineIndex | Supervisor.Supervisor

export interface SearchEnv {
  readonly workspace: string
  readonly dataDir: string
  /** An approved external root. */
  readonly external: string
  /** A directory outside every root. */
  readonly outside: string
  readonly sessionDir: string
  readonly layer: Layer.Layer<Env>
  /** The layer built once, for the test's scope: providing it costs nothing per call. */
  readonly context: Context.Context<Env>
}

export const SESSION_ID = "search-session"

/**
 * A real workspace, scratch, approved external root and an unapproved dir, all temporary, and a
 * supervisor for the test's scope (one per test, as one per host).
 */
export const searchEnv = (
  overrides: Partial<Record<Budgets.BudgetField, number>> = {},
  options: { readonly fileIndex?: boolean; readonly supervisor?: Supervisor.Options } = {}
) =>
  Effect.gen(function* () {
    const workspace = yield* tempDir("toolcap-ws-")
    const dataDir = yield* tempDir("toolcap-data-")
    const external = yield* tempDir("toolcap-ext-")
    const outside = yield* tempDir("toolcap-out-")
    const budgets = Budgets.layerWith(overrides).pipe(Layer.orDie)
    const supervisor = yield* Supervisor.make(options.supervisor)
    const layer = Layer.mergeAll(
      budgets,
      Layer.succeed(Supervisor.Supervisor, supervisor),
      Workspace.layer({ root: workspace, approvedExternalRoots: [external] }).pipe(Layer.orDie),
      LineIndex.layer(),
      options.fileIndex === true ? FileIndex.layer() : Layer.empty,
      Scratch.layer({ dataDir, sessionId: SESSION_ID }).pipe(
        Layer.provide(Layer.mergeAll(NodeFileSystem.layer, budgets)),
        Layer.orDie
      )
    )
    const sessionDir = path.join(Scratch.scratchRoot(dataDir), SESSION_ID)
    const context = yield* Layer.build(layer)
    return { workspace, dataDir, external, outside, sessionDir, layer, context } satisfies SearchEnv
  })

/**
 * Waits until the file index of `env` (a host built with `fileIndex: true`) has indexed `dir`
 * (default: the workspace root): searches are answered by listings until then.
 */
export const indexReady = (env: SearchEnv, dir: string = env.workspace) =>
  Effect.flatMap(
    Effect.sync(() =>
      Context.getOption(env.context as unknown as Context.Context<FileIndex.FileIndex>, FileIndex.FileIndex)
    ),
    (index) => (Option.isSome(index) ? index.value.ready(dir) : Effect.succeed(false))
  )

/** Writes files (creating directories) below `root`. */
export const writeTree = (root: string, files: Record<string, string | Uint8Array>): void => {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
}

/** Sets a file's modification time to `seconds` after the epoch. */
export const setMtime = (file: string, seconds: number): void => fs.utimesSync(file, seconds, seconds)

/** Runs an effect and returns its Either, failing the test on a defect. */
export const attempt = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.either(effect)

/** The left of an Either, or a thrown error naming what came instead. */
export const leftOf = <A, E>(either: Either.Either<A, E>): E =>
  Either.match(either, {
    onLeft: (error) => error,
    onRight: (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value).slice(0, 300)}`)
    }
  })

/** The right of an Either, or a thrown error naming the failure. */
export const rightOf = <A, E>(either: Either.Either<A, E>): A =>
  Either.getOrThrowWith(either, (error) => new Error(`expected a result, got ${JSON.stringify(error)}`))

/** Runs ripgrep directly (the oracle), answering stdout split on NUL or newline. */
export const ripgrep = (args: ReadonlyArray<string>, cwd: string): Array<string> => {
  const result = spawnSync(rgPath, args as Array<string>, { cwd, maxBuffer: 1 << 30, encoding: "utf8" })
  if (result.status !== 0 && result.status !== 1) throw new Error(`rg failed: ${result.stderr}`)
  return result.stdout.split(args.includes("--null") ? "\0" : "\n").filter((line) => line.length > 0)
}

/** The flags that make ripgrep decide files as rules S2 and S3 say (same as the tools use). */
export const oracleFlags = [
  "--no-config",
  "--hidden",
  "--no-require-git",
  "--no-ignore-parent",
  "--no-ignore-global",
  "--glob",
  "!.git"
] as const

/** A sorted copy. */
export const sortedCopy = <A>(items: ReadonlyArray<A>, order?: (a: A, b: A) => number): Array<A> => {
  const copy = [...items]
  copy.sort(order)
  return copy
}

/** Strips ripgrep's `./` prefix. */
export const plain = (relative: string): string => (relative.startsWith("./") ? relative.slice(2) : relative)
