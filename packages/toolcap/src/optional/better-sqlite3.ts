/**
 * Stands in for `better-sqlite3` inside the bundle: the native driver is an optional peer, loaded
 * the first time a checkpoint database is opened, so the CLI, MCP server and Promise API start
 * (and run every tool) without it, and a checkpoint without it names the package to install.
 */
import { createRequire } from "node:module"
import { OptionalPeer } from "@toolcap/adapters"

const require = createRequire(import.meta.url)

type Driver = new (...args: ReadonlyArray<unknown>) => object

let driver: Driver | undefined

const load = (): Driver =>
  (driver ??= OptionalPeer.loadSync(
    "better-sqlite3",
    "the checkpoint store",
    () => require("better-sqlite3") as Driver
  ))

/** Constructs the real driver's database (a constructor returning an object yields that object). */
function Database(this: unknown, ...args: ReadonlyArray<unknown>): object {
  const Real = load()
  return new Real(...args)
}

export default Database
