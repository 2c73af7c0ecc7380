/**
 * The workspace file index of a long-lived host (ToolHost, MCP server, Promise API): for each
 * directory Glob and Grep search, the files they would list there with their modification times,
 * in search order (newest first, ties by path), kept fresh by a native watcher (`fs.watch`, inotify
 * on Linux). A capped Glob or Grep then walks it newest first and stops as soon as its cap is met,
 * instead of listing and dating the tree again.
 *
 * A search never waits for the index: the first search of a directory is answered by a listing
 * of its own (one ripgrep), and the index is built after it in the background, in slices that
 * leave the event loop free; until it is complete, searches list. Whatever the watcher's events
 * cannot describe (a watcher error, a changed ignore file, a burst that may have overflowed the
 * kernel queue, the directory replaced) sends searches back to listing while the index is built
 * again. A tree with more directories than the watch budget is not indexed.
 *
 * A host without this service (the CLI's one-shot `call`) lists the tree on every search.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Index from "./internal/search/fileIndex.js"
import { eventLoopTurn } from "./internal/search/order.js"

/**
 * Directories indexed at once (one per distinct searched directory: an explicit `path` changes
 * which ignore files apply, so it has its own index); the least recently used is closed first.
 *
 * @since 0.1.0
 * @category models
 */
export const DEFAULT_MAX_ROOTS = 4

/**
 * Directories watched at most per host, across its indexes. Each inotify watch costs the kernel
 * about 1 KB and counts against the user's `fs.inotify.max_user_watches`, shared with editors and
 * other tools; a tree with more directories is searched without an index.
 *
 * @since 0.1.0
 * @category models
 */
export const DEFAULT_MAX_WATCHES = 32_768

/**
 * Directory entries a build slice lists before the event loop gets a turn: about a millisecond
 * of `readdir`, `lstat` and `fs.watch` calls, so a build never holds up a call's I/O for long.
 */
const ENTRIES_PER_SLICE = 512

/**
 * The files of a directory as of one query, and the directory (device and inode) they were
 * listed from.
 *
 * @since 0.1.0
 * @category models
 */
export type Snapshot = Index.Snapshot

/**
 * @since 0.1.0
 * @category models
 */
export interface FileIndexService {
  /**
   * The files below the real directory `root` in search order, fresh as of this call; `None` when
   * there is no complete, trustworthy index of it yet (then the caller lists it itself). Never
   * waits for a build.
   */
  readonly files: (root: string) => Effect.Effect<Option.Option<Snapshot>>
  /** Starts building the index of `root` in the background, unless it is built or being built. */
  readonly warm: (root: string) => Effect.Effect<void>
  /** Waits until the index of `root` is built (starting it if needed); false when it cannot be. */
  readonly ready: (root: string) => Effect.Effect<boolean>
  /** Files indexed now, per root (for benches and diagnostics). */
  readonly sizes: () => ReadonlyArray<{ readonly root: string; readonly files: number }>
}

/**
 * @since 0.1.0
 * @category services
 */
export class FileIndex extends Context.Tag("@toolcap/tools/FileIndex")<FileIndex, FileIndexService>() {}

/**
 * @since 0.1.0
 * @category models
 */
export interface FileIndexOptions {
  readonly maxRoots?: number | undefined
  readonly maxWatches?: number | undefined
}

interface Entry {
  readonly index: Index.DirectoryIndex
  /** The build in progress (or the last one), completed with whether it succeeded. */
  build: Deferred.Deferred<boolean> | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
}

/**
 * The index, closed (every build interrupted, every watcher stopped) with the layer's scope.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: FileIndexOptions = {}): Layer.Layer<FileIndex> =>
  Layer.scoped(
    FileIndex,
    Effect.gen(function* () {
      const maxRoots = options.maxRoots ?? DEFAULT_MAX_ROOTS
      const maxWatches = options.maxWatches ?? DEFAULT_MAX_WATCHES
      const scope = yield* Effect.scope
      const entries = new Map<string, Entry>()
      // an index that could not be built is not retried for this root until another root evicts it
      const unindexable = new Set<string>()
      const closeEntry = (entry: Entry) =>
        Effect.andThen(
          entry.fiber === undefined ? Effect.void : Fiber.interrupt(entry.fiber),
          Effect.sync(() => entry.index.close())
        )
      yield* Effect.addFinalizer(() =>
        Effect.forEach([...entries.values()], closeEntry, { discard: true }).pipe(
          Effect.andThen(Effect.sync(() => entries.clear()))
        )
      )
      /** The entry of `root`, made most recently used (created when missing). */
      const entryOf = (root: string) =>
        Effect.gen(function* () {
          let entry = entries.get(root)
          if (entry !== undefined) {
            entries.delete(root)
            entries.set(root, entry)
            return entry
          }
          entry = {
            index: Index.make(root, Math.floor(maxWatches / maxRoots)),
            build: undefined,
            fiber: undefined
          }
          entries.set(root, entry)
          while (entries.size > maxRoots) {
            const oldest = entries.keys().next().value!
            const evicted = entries.get(oldest)!
            entries.delete(oldest)
            unindexable.clear()
            yield* closeEntry(evicted)
          }
          return entry
        })
      /** One build, slice by slice; the first slice waits for a turn of the event loop (the call that asked answers first). */
      const build = (root: string, entry: Entry, done: Deferred.Deferred<boolean>) =>
        Effect.gen(function* () {
          yield* eventLoopTurn
          entry.index.startBuild()
          while (!entry.index.buildSome(ENTRIES_PER_SLICE)) yield* eventLoopTurn
          yield* Deferred.succeed(done, true)
        }).pipe(
          Effect.catchAllDefect(() =>
            Effect.gen(function* () {
              entry.index.close()
              if (entries.get(root) === entry) entries.delete(root)
              unindexable.add(root)
              yield* Deferred.succeed(done, false)
            })
          ),
          Effect.onInterrupt(() => Deferred.succeed(done, false))
        )
      const warming = (root: string) =>
        Effect.gen(function* () {
          if (unindexable.has(root)) return undefined
          const entry = yield* entryOf(root)
          if (entry.index.built() || (entry.build !== undefined && !(yield* Deferred.isDone(entry.build))))
            return entry.build
          const done = yield* Deferred.make<boolean>()
          entry.build = done
          entry.fiber = yield* Effect.forkIn(build(root, entry, done), scope)
          return done
        })
      const files = (root: string) =>
        Effect.gen(function* () {
          const entry = entries.get(root)
          if (entry === undefined || !entry.index.built()) return Option.none<Snapshot>()
          // a failure to look at the tree is a reason to list it, never an error of the call
          const snapshot = yield* Effect.tryPromise(() => entry.index.snapshot()).pipe(
            Effect.orElseSucceed(() => undefined)
          )
          if (snapshot !== undefined) return Option.some(snapshot)
          yield* warming(root)
          return Option.none<Snapshot>()
        })
      return FileIndex.of({
        files,
        warm: (root) => Effect.asVoid(warming(root)),
        ready: (root) =>
          Effect.gen(function* () {
            const done = yield* warming(root)
            if (done === undefined) return entries.get(root)?.index.built() ?? false
            return yield* Deferred.await(done)
          }),
        sizes: () =>
          [...entries.values()].map((entry) => ({ root: entry.index.root, files: entry.index.size() }))
      })
    })
  )
