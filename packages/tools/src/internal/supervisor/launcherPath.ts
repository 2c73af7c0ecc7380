/**
 * Where the native launcher (`native/confine.c`, built by the package's build) is: Landlock
 * confinement of ripgrep and the cgroup entry of Bash's shell both run it.
 */
import { fileURLToPath } from "node:url"

/**
 * The environment variable naming the launcher, for a host that bundles toolcap (the bundle no
 * longer sits beside the package's `dist/native`).
 */
export const pathVariable = "TOOLCAP_LAUNCHER"

/** The launcher's path: `TOOLCAP_LAUNCHER`, else the package's build output (the same from src/ and dist/). */
export const launcherPath: string =
  process.env[pathVariable] ??
  fileURLToPath(
    new URL(`../../../dist/native/${process.platform}-${process.arch}/toolcap-confine`, import.meta.url)
  )
