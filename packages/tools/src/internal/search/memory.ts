/**
 * Which file a search engine run died in at its memory ceiling. ripgrep's output stops before the
 * file it was reading (a file's lines are printed as they are found, and the line that filled the
 * memory is never found), so the file is inferred from the run's files by size: only a file with a
 * line (or, with `multiline`, a whole file) close to the ceiling can need that much memory.
 */
import * as fs from "node:fs"
import { ToolError } from "@toolcap/limits"

/**
 * The smallest file that can fill the ceiling, as a share of it: ripgrep's line buffer doubles,
 * so holding a line of a quarter of the ceiling takes an allocation of half of it beside the old
 * buffer and the process's own start (threads' stacks, the allocator's arenas).
 */
const SUSPECT_SHARE = 4

export interface RunFile {
  /** As the tool shows it. */
  readonly display: string
  readonly absolute: string
}

/**
 * The typed error of a run of `files` that died at `limitBytes`: `certain` when the run had one
 * file, `likely` when one of its files is large enough, `possible` (the largest named, the others
 * listed) when several are, `unknown` when none is (the pattern's own automata needed it).
 */
export const limitError = (
  tool: string,
  limitBytes: number,
  files: ReadonlyArray<RunFile>
): ToolError.ToolMemoryLimit => {
  const sized: Array<{ readonly file: RunFile; readonly bytes: number }> = []
  for (const file of files) {
    try {
      const stats = fs.statSync(file.absolute)
      if (stats.isFile()) sized.push({ file, bytes: stats.size })
    } catch {
      // a file gone since the run is not a suspect
    }
  }
  if (files.length === 1 && sized.length === 1) {
    const only = sized[0]!
    return new ToolError.ToolMemoryLimit({
      tool,
      limitBytes,
      certainty: "certain",
      path: only.file.display,
      fileBytes: only.bytes,
      others: []
    })
  }
  const suspects = sized
    .filter((entry) => entry.bytes * SUSPECT_SHARE >= limitBytes)
    .toSorted((a, b) => b.bytes - a.bytes || (a.file.display < b.file.display ? -1 : 1))
  const first = suspects[0]
  if (first === undefined)
    return new ToolError.ToolMemoryLimit({ tool, limitBytes, certainty: "unknown", others: [] })
  return new ToolError.ToolMemoryLimit({
    tool,
    limitBytes,
    certainty: suspects.length === 1 ? "likely" : "possible",
    path: first.file.display,
    fileBytes: first.bytes,
    others: suspects.slice(1).map((entry) => entry.file.display)
  })
}
