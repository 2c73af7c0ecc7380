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

const picomatch = createRequire(import.meta.url)("picomatch") as Picomatch

export default picomatch
