// The part of picomatch 2.3 (the matcher fast-glob itself uses) that toolcap calls. The package
// ships no type declarations, so it is loaded through require and typed here, in one place.
import { createRequire } from "node:module"

interface PicomatchOptions {
  readonly dot?: boolean
  readonly nocase?: boolean
}

interface ScanResult {
  readonly base: string
  readonly glob: string
  readonly isGlob: boolean
  readonly negated: boolean
}

interface Picomatch {
  (glob: string, options?: PicomatchOptions): (input: string) => boolean
  scan(input: string, options?: PicomatchOptions): ScanResult
}

let loaded: Picomatch | undefined

/** picomatch itself, required on first use: a Read or Bash call never matches a glob. */
const load = (): Picomatch => (loaded ??= createRequire(import.meta.url)("picomatch") as Picomatch)

const picomatch: Picomatch = Object.assign(
  (glob: string, options?: PicomatchOptions) => load()(glob, options),
  { scan: (input: string, options?: PicomatchOptions) => load().scan(input, options) }
)

export default picomatch
