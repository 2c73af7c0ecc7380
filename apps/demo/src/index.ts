/** Placeholder until the CLI lands. */
export const packageName = "@toolcap/demo"
