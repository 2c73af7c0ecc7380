/**
 * The workspace file index of a long-lived host (ToolHost, MCP server, Promise API): for each
 * directory Glob and Grep search, the files they would list there with their modification times,
 * in search order (newest first, ties by path), kept fresh by a native watcher (`fs.watch`, inotify
 * on Linux). Built lazily on the first search of a directory; a capped Glob or Grep then walks it
 * newest first and stops as soon as its cap is met, instead of listing and dating the tree again.
 *
 * Correctness over speed: a query first lets every already-queued watcher event arrive, so a
 * Grep right after a write sees the write; whatever the events cannot describe (a watcher error,
 * a changed ignore file, a burst that may have overflowed the kernel queue) makes the next query
 * rebuild the index from a fresh walk. A tree with more directories than the watch budget is not
 * indexed: its searches list the tree as a one-shot host does.
 *
 * A host without this service (the CLI's one-shot `call`) lists the tree on every search.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Index from "./internal/search/fileIndex.js"

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
 * @since 0.1.0
 * @category models
 */
export interface FileIndexService {
  /**
   * The files below the real directory `root` in search order, fresh as of this call; `None` when
   * the tree cannot be indexed (then the caller lists it itself).
   */
  readonly files: (root: string) => Effect.Effect<Option.Option<ReadonlyArray<Index.IndexedFile>>>
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

/**
 * The index, closed (every watcher stopped) with the layer's scope.
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
      const indexes = new Map<string, Index.DirectoryIndex>()
      // an index that could not be built is not retried for this root until another root evicts it
      const unindexable = new Set<string>()
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const index of indexes.values()) index.close()
          indexes.clear()
        })
      )
      const indexOf = (root: string): Index.DirectoryIndex => {
        let index = indexes.get(root)
        if (index !== undefined) {
          indexes.delete(root)
          indexes.set(root, index)
          return index
        }
        index = Index.make(root, Math.floor(maxWatches / maxRoots))
        indexes.set(root, index)
        while (indexes.size > maxRoots) {
          const oldest = indexes.keys().next().value!
          indexes.get(oldest)!.close()
          indexes.delete(oldest)
          unindexable.clear()
        }
        return index
      }
      const files = (root: string) =>
        unindexable.has(root)
          ? Effect.succeedNone
          : Effect.tryPromise(() => indexOf(root).snapshot()).pipe(
              Effect.map(Option.some),
              Effect.catchAll(() =>
                Effect.sync(() => {
                  indexes.get(root)?.close()
                  indexes.delete(root)
                  unindexable.add(root)
                  return Option.none<ReadonlyArray<Index.IndexedFile>>()
                })
              )
            )
      return FileIndex.of({
        files,
        sizes: () => [...indexes.values()].map((index) => ({ root: index.root, files: index.size() }))
      })
    })
  )
