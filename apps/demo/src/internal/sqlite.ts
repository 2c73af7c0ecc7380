/**
 * Whether checkpoints can open their SQLite database here: the optional driver `better-sqlite3`
 * loaded and asked for its SQLite version. Required from this module's own place, so it finds the
 * driver a host installed beside the bundled package as well as the workspace's.
 */
import { createRequire } from "node:module"
import { OptionalPeer } from "@toolcap/adapters"

const requireFromHere = createRequire(import.meta.url)

interface Database {
  prepare(sql: string): { pluck(): { get(): unknown } }
  close(): void
}

/** What the probe found. @internal */
export type Sqlite =
  | { readonly kind: "ok"; readonly version: string }
  | { readonly kind: "missing" | "broken"; readonly message: string }

/** Loads the driver and opens an in-memory database. @internal */
export const probe = (): Sqlite => {
  try {
    const Driver = OptionalPeer.loadSync(
      "better-sqlite3",
      "the checkpoint store",
      () => requireFromHere("better-sqlite3") as new (file: string) => Database
    )
    const db = new Driver(":memory:")
    try {
      return { kind: "ok", version: String(db.prepare("select sqlite_version()").pluck().get()) }
    } finally {
      db.close()
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const missing = OptionalPeer.isOptionalPeerMissing(error) && error.loadError === undefined
    return { kind: missing ? "missing" : "broken", message }
  }
}
