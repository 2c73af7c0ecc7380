/**
 * Loads an optional peer (the AI SDK, the MCP SDK) on first use; when it is not installed, the
 * error names the package to install instead of a bare module-resolution failure.
 */

/** @internal */
export const load = async <A>(
  packageName: string,
  feature: string,
  importer: () => Promise<A>
): Promise<A> => {
  try {
    return await importer()
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new Error(
        `toolcap: ${feature} needs the optional package ${packageName}, which is not installed. Install it beside toolcap: npm install ${packageName}`,
        { cause: error }
      )
    }
    throw error
  }
}
