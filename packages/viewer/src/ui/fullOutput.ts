/**
 * The full output view: one file (a spill file, a workspace file) paged through Read windows.
 * The scrollbar stands for the whole file (its length estimated from the first window until Read
 * reaches the end); only the lines on screen are fetched and drawn, so a 1 GiB log costs one
 * window per screen. Long lines wrap; every line shows its number. Search goes through Grep.
 */
import { formatCount, h, json } from "./dom.js"
import type { EngineGuard, GrepMatch, Info, Outcome, ReadResult } from "./types.js"

/** Lines drawn at once: more than a tall screen holds, so wrapped lines never leave a blank. */
const LINES_DRAWN = 120

/** Pixels of scrollbar per line, and the most the spacer may be (browsers cap element height). */
const PIXELS_PER_LINE = 18
const SPACER_MAX_PIXELS = 8_000_000

/** Lines kept in the page's cache before it is emptied (a few screens either way). */
const CACHE_MAX_LINES = 20_000

/** One short line on how ripgrep was guarded; the reasons in its tooltip. */
const guardSummary = (guard: EngineGuard): string =>
  `ripgrep ${guard.landlockRead ? "confined by Landlock" : "not confined"}, ${
    guard.memoryCeiling === undefined
      ? "no memory ceiling"
      : `memory ≤ ${Math.round(guard.memoryCeiling.maxBytes / 1024 / 1024)} MiB`
  }`
const guardDetail = (guard: EngineGuard): string =>
  [
    guard.launcher ? "started by toolcap-confine" : "started without the launcher",
    guard.landlockReadReason,
    guard.memoryCeiling?.reason
  ]
    .filter((part) => part !== undefined)
    .join("; ")

/** Spill files listed per session before the list says how many more there are (buttons are cheap; a session holds few). */
const SPILLS_LISTED = 1000

export interface FullOutput {
  readonly open: (path: string, line?: number) => void
}

export const mount = (root: HTMLElement, info: () => Promise<Info>): FullOutput => {
  const pathInput = h("input", {
    id: "file-path",
    type: "text",
    size: "60",
    "aria-label": "file path",
    placeholder: "a spill file or a workspace path"
  })
  const openButton = h("button", { type: "button", id: "open-file" }, "Open")
  const lineInput = h("input", { id: "goto-line", type: "number", min: "1", "aria-label": "line number" })
  const gotoButton = h("button", { type: "button", id: "goto" }, "Go to line")
  const searchInput = h("input", {
    id: "search-pattern",
    type: "search",
    "aria-label": "search pattern (regular expression)"
  })
  const caseBox = h("input", { id: "search-case", type: "checkbox" })
  const searchButton = h("button", { type: "button", id: "search" }, "Search")
  const status = h("p", { class: "file-status", role: "status" })
  const hits = h("ol", { class: "hits" })
  const spacer = h("div", { class: "spacer" })
  const lines = h("div", { class: "lines" })
  const scroller = h(
    "div",
    { class: "scroller", tabindex: "0", "aria-label": "file content" },
    h("div", { class: "sticky" }, lines),
    spacer
  )
  const spills = h("details", { class: "spills" }, h("summary", {}, "Spill files of this data dir"))

  root.append(
    h("div", { class: "toolbar" }, h("label", { for: "file-path" }, "File "), pathInput, openButton),
    h(
      "div",
      { class: "toolbar" },
      h("label", { for: "goto-line" }, "Line "),
      lineInput,
      gotoButton,
      " ",
      h("label", { for: "search-pattern" }, "Search "),
      searchInput,
      h("label", { for: "search-case" }, caseBox, " ignore case"),
      searchButton
    ),
    status,
    hits,
    scroller,
    spills
  )

  let path = ""
  let generation = 0
  let fileBytes = 0
  let totalLines: number | undefined
  let estimatedLines = 1
  let firstLine = 1
  let target: number | undefined
  const cache = new Map<number, string>()
  let fetching = false

  const knownLines = () => totalLines ?? Math.max(estimatedLines, firstLine + LINES_DRAWN)
  const pixelsPerLine = () => Math.min(PIXELS_PER_LINE, SPACER_MAX_PIXELS / knownLines())

  const describe = () => {
    status.textContent = `${path} · ${formatCount(fileBytes)} bytes · ${totalLines === undefined ? `about ${formatCount(estimatedLines)}` : formatCount(totalLines)} lines · showing from line ${formatCount(firstLine)}`
  }

  const draw = () => {
    spacer.style.height = `${Math.ceil(knownLines() * pixelsPerLine())}px`
    const rows: Array<HTMLElement> = []
    for (let line = firstLine; line < firstLine + LINES_DRAWN; line++) {
      const text = cache.get(line)
      if (text === undefined) break
      rows.push(
        h(
          "div",
          { class: line === target ? "line target" : "line", "data-line": String(line) },
          h("span", { class: "ln", "aria-hidden": "true" }, String(line)),
          h("span", { class: "text" }, text)
        )
      )
    }
    lines.replaceChildren(...rows)
    describe()
  }

  const fetchWindow = async (offset: number) => {
    const mine = generation
    const url = `/api/read?path=${encodeURIComponent(path)}&offset=${offset}&limit=${LINES_DRAWN * 2}`
    const { body } = await json<Outcome<ReadResult>>(url)
    if (mine !== generation) return
    if (!body.ok) {
      status.textContent = `${body.error.code}: ${body.error.message}`
      lines.replaceChildren()
      return
    }
    const window = body.result
    fileBytes = window.fileBytes
    if (cache.size > CACHE_MAX_LINES) cache.clear()
    const texts = window.content.split("\n")
    for (let index = 0; index < window.lineCount; index++)
      cache.set(window.offset + index, texts[index] ?? "")
    if (window.totalLines !== undefined) totalLines = window.totalLines
    else if (window.lineCount > 0 && totalLines === undefined) {
      const averageBytes = Math.max(1, new TextEncoder().encode(window.content).length / window.lineCount)
      estimatedLines = Math.max(
        estimatedLines,
        window.offset + window.lineCount,
        Math.round(fileBytes / averageBytes)
      )
    }
    if (window.lineCount === 0 && totalLines === undefined) totalLines = Math.max(0, offset - 1)
  }

  /** Fetches what is missing of the drawn range, then draws; one request at a time, latest wins. */
  const refresh = async () => {
    if (fetching || path === "") return
    fetching = true
    try {
      for (;;) {
        const last = Math.min(firstLine + LINES_DRAWN - 1, totalLines ?? Number.MAX_SAFE_INTEGER)
        let missing: number | undefined
        for (let line = firstLine; line <= last; line++)
          if (!cache.has(line)) {
            missing = line
            break
          }
        if (missing === undefined) break
        const before = firstLine
        await fetchWindow(missing)
        if (!cache.has(missing) && before === firstLine) break
      }
      draw()
    } finally {
      fetching = false
    }
  }

  scroller.addEventListener("scroll", () => {
    const line = Math.floor(scroller.scrollTop / pixelsPerLine()) + 1
    if (line === firstLine) return
    firstLine = Math.max(1, Math.min(line, totalLines ?? line))
    draw()
    void refresh()
  })

  const goto = (line: number) => {
    target = line
    firstLine = Math.max(1, line - 3)
    scroller.scrollTop = (firstLine - 1) * pixelsPerLine()
    draw()
    void refresh()
  }

  const open = (next: string, line?: number) => {
    generation++
    path = next
    pathInput.value = next
    fileBytes = 0
    totalLines = undefined
    estimatedLines = 1
    firstLine = 1
    target = undefined
    cache.clear()
    hits.replaceChildren()
    scroller.scrollTop = 0
    lines.replaceChildren()
    status.textContent = `opening ${next}…`
    fetching = false
    if (line !== undefined) goto(line)
    else void refresh()
  }

  const search = async () => {
    if (path === "" || searchInput.value === "") return
    const url = `/api/grep?path=${encodeURIComponent(path)}&pattern=${encodeURIComponent(searchInput.value)}&caseInsensitive=${caseBox.checked}`
    hits.replaceChildren(h("li", {}, "searching…"))
    const { body } = await json<
      Outcome<{
        matches: ReadonlyArray<GrepMatch>
        count: number
        truncated: boolean
        guard: EngineGuard
      }>
    >(url)
    if (!body.ok) {
      hits.replaceChildren(h("li", { class: "error-message" }, `${body.error.code}: ${body.error.message}`))
      return
    }
    const { matches, count, truncated, guard } = body.result
    hits.replaceChildren(
      h(
        "li",
        { class: "hit-count" },
        `${formatCount(count)} match${count === 1 ? "" : "es"}${truncated ? " (first ones shown)" : ""}`
      ),
      h("li", { class: "search-guard", title: guardDetail(guard) }, guardSummary(guard)),
      ...matches.map((match) => {
        const button = h(
          "button",
          { type: "button", class: "hit", "data-line": String(match.line) },
          `line ${match.line}: `,
          match.text
        )
        button.addEventListener("click", () => goto(match.line))
        return h("li", {}, button)
      })
    )
  }

  openButton.addEventListener("click", () => open(pathInput.value.trim()))
  pathInput.addEventListener("keydown", (event) => {
    if (event.key === "Enter") open(pathInput.value.trim())
  })
  gotoButton.addEventListener("click", () => goto(Number(lineInput.value) || 1))
  lineInput.addEventListener("keydown", (event) => {
    if (event.key === "Enter") goto(Number(lineInput.value) || 1)
  })
  searchButton.addEventListener("click", () => void search())
  searchInput.addEventListener("keydown", (event) => {
    if (event.key === "Enter") void search()
  })
  scroller.addEventListener("keydown", (event) => {
    const step =
      event.key === "ArrowDown"
        ? 1
        : event.key === "ArrowUp"
          ? -1
          : event.key === "PageDown"
            ? 40
            : event.key === "PageUp"
              ? -40
              : 0
    if (step === 0) return
    event.preventDefault()
    scroller.scrollTop += step * pixelsPerLine()
  })

  spills.addEventListener("toggle", () => {
    if (!spills.open || spills.querySelector("ul") !== null) return
    void info().then((data) => {
      for (const session of data.sessions) {
        if (session.spills.length === 0) continue
        const items = session.spills.slice(0, SPILLS_LISTED).map((spill) => {
          const button = h(
            "button",
            { type: "button", class: "spill" },
            `${spill.name} (${formatCount(spill.bytes)} bytes)`
          )
          button.addEventListener("click", () => open(spill.path))
          return h("li", {}, button)
        })
        const more = session.spills.length - SPILLS_LISTED
        spills.append(
          h("h4", {}, session.sessionId),
          h("ul", {}, items, more > 0 ? h("li", {}, `and ${formatCount(more)} more`) : null)
        )
      }
    })
  })

  return { open }
}
