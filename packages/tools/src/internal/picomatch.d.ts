// The part of picomatch 2.3 (the matcher fast-glob itself uses) that toolcap calls; the package
// ships no type declarations of its own.
declare module "picomatch" {
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
  const picomatch: Picomatch
  export default picomatch
}
