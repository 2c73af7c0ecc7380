/**
 * Loads an optional peer (the AI SDK, the MCP SDK) on first use; when it is not installed, the
 * error names the package to install instead of a bare module-resolution failure.
 */
export {
  /** @internal */
  load
} from "../OptionalPeer.js"
