/**
 * The peer hosts the benchmark compares toolcap with, each modelled from its source at a named
 * version (see `src/peers/` and each policy's `sources`).
 *
 * @since 0.1.0
 */
import type { PeerPolicy } from "./Peer.js"
import { claudeCode } from "./peers/claudeCode.js"
import { cline } from "./peers/cline.js"
import { codex } from "./peers/codex.js"
import { geminiCli } from "./peers/geminiCli.js"
import { opencode } from "./peers/opencode.js"
import { pi } from "./peers/pi.js"
import { rooCode } from "./peers/rooCode.js"
import { rtk } from "./peers/rtk.js"

/**
 * Every peer, in report order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const peers: ReadonlyArray<PeerPolicy> = [
  claudeCode,
  codex,
  opencode,
  geminiCli,
  rooCode,
  cline,
  pi,
  rtk
]
