/** Placeholder until the package lands. */
export const packageName = "@toolcap/spill"
