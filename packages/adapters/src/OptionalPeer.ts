/**
 * The optional peers (`ai`, the MCP SDK, the SQLite driver): each is loaded by the one feature
 * that needs it, on first use. When it is missing, the feature fails with `OptionalPeerMissing`,
 * whose message is one line naming the package to install; a command line prints that line alone.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Predicate from "effect/Predicate"

/**
 * A feature was used whose optional peer is not installed (or could not be loaded).
 *
 * @since 0.1.0
 * @category errors
 */
export class OptionalPeerMissing extends Data.TaggedError("OptionalPeerMissing")<{
  /** The npm package to install. */
  readonly packageName: string
  /** What needed it, e.g. "the MCP server". */
  readonly feature: string
  /** Why loading failed, when the package is installed but does not load (built for another Node). */
  readonly loadError?: string | undefined
}> {
  readonly code = "TOOLCAP_PEER_MISSING"
  override get message(): string {
    return this.loadError === undefined
      ? `toolcap: ${this.feature} needs the optional package ${this.packageName}, which is not installed. Install it beside toolcap: npm install ${this.packageName}`
      : `toolcap: ${this.feature} needs the optional package ${this.packageName}, which is installed but could not be loaded (${this.loadError}). Reinstall it for this Node: npm rebuild ${this.packageName}`
  }
}

/**
 * Whether a value (a thrown error, a defect) is an `OptionalPeerMissing`, from this copy of
 * toolcap or another one.
 *
 * @since 0.1.0
 * @category errors
 */
export const isOptionalPeerMissing = (u: unknown): u is OptionalPeerMissing =>
  Predicate.hasProperty(u, "code") && u.code === "TOOLCAP_PEER_MISSING" && u instanceof Error

/** Whether `error` says that `packageName` itself (not one of its own dependencies) was not found. */
const notFound = (error: unknown, packageName: string): boolean => {
  const code = Predicate.hasProperty(error, "code") ? error.code : undefined
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false
  const message = error instanceof Error ? error.message : ""
  return message.includes(`'${packageName}'`) || message.includes(`'${packageName}/`)
}

/**
 * Loads an optional peer with `importer`; when the package is missing, or installed but failing
 * to load (a native module built for another Node), throws `OptionalPeerMissing` instead.
 *
 * @since 0.1.0
 * @category constructors
 */
export const loadSync = <A>(packageName: string, feature: string, importer: () => A): A => {
  try {
    return importer()
  } catch (error) {
    throw failure(error, packageName, feature)
  }
}

/**
 * `loadSync` for an `import()`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = async <A>(
  packageName: string,
  feature: string,
  importer: () => Promise<A>
): Promise<A> => {
  try {
    return await importer()
  } catch (error) {
    throw failure(error, packageName, feature)
  }
}

const failure = (error: unknown, packageName: string, feature: string): unknown => {
  if (notFound(error, packageName)) return new OptionalPeerMissing({ packageName, feature })
  // a native module that does not load on this Node (another ABI, a missing shared library)
  if (error instanceof Error && Predicate.hasProperty(error, "code") && error.code === "ERR_DLOPEN_FAILED") {
    return new OptionalPeerMissing({ packageName, feature, loadError: error.message })
  }
  return error
}
