/** The live calls view: each call as it happens, fed by the server's event stream. */
import { formatCount, h } from "./dom.js"
import type { BashResult, Outcome } from "./types.js"

/**
 * Characters of live output a pane keeps in the page: the newest are kept, and the pane says
 * that earlier ones were trimmed (the full output is in the spill file, the excerpt in the result).
 */
const PANE_MAX_CHARS = 256 * 1024

/** Calls kept on the page, newest first; older ones leave so a long session stays light. */
const CALLS_SHOWN = 50

/** Characters of a non-Bash result shown inline (the full output view opens the rest). */
const RESULT_PREVIEW_CHARS = 4096

/** The model-facing marker (rules M2–M6) inside a Bash excerpt. */
const markerPattern = /\[truncated: [^\]\n]*\]/g

interface Pane {
  readonly element: HTMLElement
  readonly body: HTMLElement
  chars: number
  trimmed: boolean
  nextSeq: number
}

interface CallView {
  readonly element: HTMLElement
  readonly status: HTMLElement
  readonly panes: Record<"stdout" | "stderr", Pane>
  readonly result: HTMLElement
}

export interface LiveOptions {
  /** Whether a host feeds this viewer (`toolcap ui` alone has none). */
  readonly live: Promise<boolean>
  /** Opens the full output view on a file (a marker's spill file, a Read result's file). */
  readonly openFile: (path: string, line?: number) => void
}

const makePane = (stream: "stdout" | "stderr"): Pane => {
  const body = h("pre", { class: "pane-body", tabindex: "0", "aria-label": `${stream} while running` })
  const element = h("div", { class: `pane pane-${stream}`, "data-stream": stream }, h("h4", {}, stream), body)
  return { element, body, chars: 0, trimmed: false, nextSeq: 0 }
}

const seqTitle = (seq: number, lastSeq: number) => (seq === lastSeq ? `seq ${seq}` : `seq ${seq}–${lastSeq}`)

const appendToPane = (pane: Pane, node: HTMLElement, chars: number) => {
  pane.body.append(node)
  pane.chars += chars
  while (pane.chars > PANE_MAX_CHARS && pane.body.firstChild !== null) {
    const first = pane.body.firstChild as HTMLElement
    if (first.classList?.contains("trimmed")) {
      if (first.nextSibling === null) break
      const next = first.nextSibling
      pane.chars -= next.textContent?.length ?? 0
      next.remove()
      continue
    }
    pane.chars -= first.textContent?.length ?? 0
    first.remove()
    if (!pane.trimmed) {
      pane.trimmed = true
      pane.body.prepend(
        h(
          "span",
          { class: "trimmed" },
          "[earlier live output trimmed from this page; the result below names the full output]\n"
        )
      )
    }
  }
  pane.body.scrollTop = pane.body.scrollHeight
}

/** Renders a Bash excerpt with its marker as a button that opens the spill file. */
const excerpt = (
  text: string,
  spill: string | undefined,
  openFile: LiveOptions["openFile"],
  stream: string
) => {
  const pre = h("pre", { class: `excerpt excerpt-${stream}`, tabindex: "0" })
  let last = 0
  for (const match of text.matchAll(markerPattern)) {
    pre.append(text.slice(last, match.index))
    if (spill !== undefined && match[0].includes(spill)) {
      const button = h("button", { class: "marker", type: "button", title: `open ${spill}` }, match[0])
      button.addEventListener("click", () => openFile(spill))
      pre.append(button)
    } else {
      pre.append(h("mark", { class: "marker" }, match[0]))
    }
    last = match.index + match[0].length
  }
  pre.append(text.slice(last))
  // a head cut's marker is at the end: show it without scrolling
  if (stream === "stdout") requestAnimationFrame(() => (pre.scrollTop = pre.scrollHeight))
  return pre
}

/** One guard; a weaker one carries its reason as a tooltip. */
const guard = (text: string, reason: string | undefined) =>
  h("span", reason === undefined ? { class: "guard" } : { class: "guard weaker", title: reason }, text)

/** Which guards the call ran under. */
const guards = (termination: BashResult["termination"]) => {
  const ceiling = termination.memoryCeiling
  return h(
    "p",
    { class: "guards" },
    "guards: ",
    guard(
      `${termination.containment} tier${termination.cgroupEntry === undefined ? "" : ` (${termination.cgroupEntry} entry)`}`,
      termination.fallbackReason
    ),
    " · ",
    guard(termination.launcher === true ? "launcher" : "no launcher", undefined),
    " · ",
    guard(
      termination.landlockScopes === true ? "Landlock scopes" : "no Landlock scopes",
      termination.landlockScopes === true ? undefined : (termination.landlockScopesReason ?? "not reported")
    ),
    ceiling === undefined
      ? null
      : [
          " · ",
          guard(
            `memory ≤ ${ceiling.maxBytes} bytes ${ceiling.enforcedBy === "cgroup" ? "per call" : "per process"}${ceiling.reached === true ? " (reached)" : ""}`,
            ceiling.reason
          )
        ]
  )
}

const bashSummary = (result: BashResult, code: string | undefined, openFile: LiveOptions["openFile"]) => {
  const status =
    code === "TOOL_TIMEOUT"
      ? "timed out"
      : code === "TOOL_ABORTED"
        ? "aborted"
        : result.signal !== null
          ? `terminated by ${result.signal}`
          : `exit code ${result.exitCode}`
  return h(
    "div",
    { class: "bash-result" },
    h("p", { class: "exit" }, `${status} · ${(result.durationMs / 1000).toFixed(2)} s`),
    guards(result.termination),
    result.killedPids.length > 0
      ? h("p", { class: "stopped-pids" }, `stopped pids: ${result.killedPids.join(", ")}`)
      : null,
    result.termination.survivors.length > 0
      ? h("p", { class: "survivors" }, `still alive: ${result.termination.survivors.join(", ")}`)
      : null,
    result.stdout.length > 0
      ? [h("h4", {}, "stdout (bounded)"), excerpt(result.stdout, result.spill.stdout, openFile, "stdout")]
      : null,
    result.stderr.length > 0
      ? [h("h4", {}, "stderr (bounded)"), excerpt(result.stderr, result.spill.stderr, openFile, "stderr")]
      : null,
    result.truncated
      ? [
          h("h4", {}, "truncation"),
          h("pre", { class: "truncation", tabindex: "0" }, JSON.stringify(result.truncation, null, 2))
        ]
      : null
  )
}

const preview = (value: unknown): string => {
  const text = JSON.stringify(value, null, 2) ?? ""
  return text.length > RESULT_PREVIEW_CHARS ? `${text.slice(0, RESULT_PREVIEW_CHARS)}\n…` : text
}

export const mount = (root: HTMLElement, options: LiveOptions) => {
  const list = h("div", { class: "calls", "aria-live": "off" })
  const empty = h(
    "p",
    { class: "empty" },
    "No calls yet. Calls of a host started with this viewer's observer appear here as they run."
  )
  const connection = h("p", { class: "connection", role: "status" }, "connecting…")
  root.append(connection, empty, list)
  void options.live.then((live) => {
    if (!live) {
      empty.textContent =
        "No host feeds this viewer, so no live calls appear here: run the host with the viewer's observer (toolcap mcp --ui, or the observer option of the Promise and Effect hosts). Spill files, workspace files and checkpoints are in the other views."
    }
  })
  const calls = new Map<string, CallView>()

  const started = (event: { callId: string; tool: string; input: unknown; at: number }) => {
    empty.remove()
    const panes = { stdout: makePane("stdout"), stderr: makePane("stderr") }
    const status = h("span", { class: "status status-running" }, "running")
    const result = h("div", { class: "result" })
    const element = h(
      "article",
      { class: "call", "data-call-id": event.callId, "data-tool": event.tool },
      h(
        "h3",
        {},
        h("span", { class: "tool" }, event.tool),
        " ",
        h("code", { class: "call-id" }, event.callId),
        " ",
        status
      ),
      h("pre", { class: "input", tabindex: "0", "aria-label": "input" }, preview(event.input)),
      event.tool === "Bash" ? h("div", { class: "panes" }, panes.stdout.element, panes.stderr.element) : null,
      result
    )
    calls.set(event.callId, { element, status, panes, result })
    list.prepend(element)
    while (list.children.length > CALLS_SHOWN) {
      const oldest = list.lastElementChild as HTMLElement
      calls.delete(oldest.dataset["callId"] ?? "")
      oldest.remove()
    }
  }

  const chunk = (event: {
    callId: string
    stream: "stdout" | "stderr"
    seq: number
    lastSeq: number
    data: string
  }) => {
    const pane = calls.get(event.callId)?.panes[event.stream]
    if (pane === undefined) return
    if (event.seq !== pane.nextSeq) {
      // only a gap event should skip; anything else is shown, never hidden
      appendToPane(pane, h("span", { class: "gap" }, `[missing seq ${pane.nextSeq}–${event.seq - 1}]\n`), 0)
    }
    pane.nextSeq = event.lastSeq + 1
    appendToPane(
      pane,
      h("span", { class: "chunk", title: seqTitle(event.seq, event.lastSeq) }, event.data),
      event.data.length
    )
  }

  const gap = (event: {
    callId: string
    stream: "stdout" | "stderr"
    fromSeq: number
    toSeq: number
    bytes: number
  }) => {
    const pane = calls.get(event.callId)?.panes[event.stream]
    if (pane === undefined) return
    pane.nextSeq = event.toSeq + 1
    appendToPane(
      pane,
      h(
        "span",
        { class: "gap", title: seqTitle(event.fromSeq, event.toSeq) },
        `\n[gap: ${formatCount(event.bytes)} characters (${seqTitle(event.fromSeq, event.toSeq)}) not sent to this page, it was reading too slowly]\n`
      ),
      0
    )
  }

  const ended = (event: { callId: string; tool: string; outcome: Outcome }) => {
    const view = calls.get(event.callId)
    if (view === undefined) return
    const { outcome } = event
    view.element.classList.add("ended")
    view.status.className = `status ${outcome.ok ? "status-ok" : "status-error"}`
    view.status.textContent = outcome.ok ? "done" : outcome.error.code
    if (!outcome.ok) {
      view.result.append(h("p", { class: "error-message" }, outcome.error.message))
      const partial = outcome.error["partial"] as BashResult | undefined
      if (partial !== undefined)
        view.result.append(bashSummary(partial, outcome.error.code, options.openFile))
      return
    }
    if (event.tool === "Bash") {
      view.result.append(bashSummary(outcome.result as BashResult, undefined, options.openFile))
      return
    }
    const result = outcome.result as { path?: string }
    if (event.tool === "Read" && typeof result.path === "string") {
      const open = h("button", { type: "button", class: "open-file" }, `open ${result.path} in full output`)
      const path = result.path
      open.addEventListener("click", () => options.openFile(path))
      view.result.append(open)
    }
    view.result.append(h("pre", { class: "result-json", tabindex: "0" }, preview(outcome.result)))
  }

  const connect = () => {
    const source = new EventSource("/api/events")
    let reopened = false
    source.addEventListener("open", () => {
      connection.textContent = "live"
      if (reopened) {
        // the server replays what it kept: start from it again instead of doubling it
        list.replaceChildren()
        calls.clear()
      }
    })
    source.addEventListener("error", () => {
      connection.textContent = "disconnected; retrying…"
      reopened = true
    })
    const on = <A>(name: string, handle: (data: A) => void) =>
      source.addEventListener(name, (message) =>
        handle(JSON.parse((message as MessageEvent<string>).data) as A)
      )
    on("started", started)
    on("chunk", chunk)
    on("gap", gap)
    on("ended", ended)
  }
  connect()
}
