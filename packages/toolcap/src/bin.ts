#!/usr/bin/env node
/**
 * The `toolcap` executable of the package.
 *
 * @since 0.1.0
 */
import "@toolcap/demo/bin"
