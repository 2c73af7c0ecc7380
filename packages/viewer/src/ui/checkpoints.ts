/**
 * The checkpoints view: a session's checkpoints from the store, newest first — the retained user
 * messages, the one that crossed the budget with its 75/25 head and tail and the marker between,
 * and the open batch with each call's result size before and after.
 */
import { formatCount, h, json } from "./dom.js"
import type { Checkpoint, ContextEntry, CutFigures, Info, Outcome, StoredCheckpoint } from "./types.js"

/** The checkpoint marker (rules C2), between the head and the tail of a cut message. */
const checkpointMarker = "[checkpoint truncated: this message crossed the retained context budget]"

const percent = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 100))

const cutText = (text: string, cut: CutFigures) => {
  // the checkpoint puts the marker on a line of its own: `head\n<marker>\ntail`
  const at = text.indexOf(checkpointMarker)
  const head = at < 0 ? text.slice(0, cut.headLength) : text.slice(0, at).replace(/\n$/, "")
  const tail =
    at < 0
      ? text.slice(text.length - cut.tailLength)
      : text.slice(at + checkpointMarker.length).replace(/^\n/, "")
  const kept = cut.headTokens + cut.tailTokens
  const marker = h("mark", { class: "checkpoint-marker" }, checkpointMarker)
  const shown = h(
    "pre",
    { class: "message-text", tabindex: "0" },
    h("span", { class: "cut-head", title: "head (kept from the start)" }, head),
    "\n",
    marker,
    "\n",
    h("span", { class: "cut-tail", title: "tail (kept from the end)" }, tail)
  )
  // show the cut itself first: the marker with the end of the head above it
  requestAnimationFrame(() => (shown.scrollTop = marker.offsetTop - shown.offsetTop - shown.clientHeight / 2))
  return h(
    "div",
    { class: "cut" },
    h(
      "p",
      { class: "cut-figures" },
      `cut to ${formatCount(cut.budgetTokens)} of ${formatCount(cut.originalTokens)} tokens: `,
      h(
        "strong",
        { class: "cut-share" },
        `head ${percent(cut.headTokens, kept)}% / tail ${percent(cut.tailTokens, kept)}%`
      ),
      ` (${formatCount(cut.headTokens)} + ${formatCount(cut.tailTokens)} tokens, marker ${formatCount(cut.markerTokens)}; ${formatCount(cut.headLength)} + ${formatCount(cut.tailLength)} characters kept)`
    ),
    shown
  )
}

const entryView = (entry: ContextEntry, checkpoint: Checkpoint) => {
  const cut = checkpoint.cut?.messageId === entry.message.id ? checkpoint.cut : undefined
  const batchCut =
    checkpoint.batch?.results.find((result) => result.messageId === entry.message.id)?.cut ?? undefined
  const shownCut = cut ?? batchCut
  return h(
    "li",
    { class: cut !== undefined ? "entry crossing" : "entry", "data-message-id": entry.message.id },
    h(
      "p",
      { class: "entry-head" },
      h("strong", {}, entry.message.role),
      ` ${entry.message.id} · ${formatCount(entry.tokens)} tokens`,
      cut !== undefined ? " · crossed the budget" : ""
    ),
    shownCut !== undefined
      ? cutText(entry.message.text, shownCut)
      : h("pre", { class: "message-text", tabindex: "0" }, entry.message.text)
  )
}

const batchView = (batch: NonNullable<Checkpoint["batch"]>) =>
  h(
    "section",
    { class: "batch" },
    h(
      "h4",
      {},
      `Open batch of ${batch.assistantId}: ${formatCount(batch.originalTokens)} → ${formatCount(batch.tokens)} tokens (budget ${formatCount(batch.budgetTokens)}${batch.cap === null ? "" : `, cap ${formatCount(batch.cap)}`})`
    ),
    h(
      "table",
      {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "call"),
          h("th", { scope: "col" }, "result"),
          h("th", { scope: "col" }, "tokens before"),
          h("th", { scope: "col" }, "tokens after"),
          h("th", { scope: "col" }, "cut")
        )
      ),
      h(
        "tbody",
        {},
        batch.results.map((result) =>
          h(
            "tr",
            { "data-call-id": result.callId },
            h("td", {}, result.callId),
            h("td", {}, result.messageId),
            h("td", { class: "before" }, formatCount(result.originalTokens)),
            h("td", { class: "after" }, formatCount(result.tokens)),
            h("td", {}, result.cut === null ? "whole" : "75/25 cut")
          )
        )
      )
    ),
    batch.pending.length > 0 ? h("p", {}, `waiting for results of: ${batch.pending.join(", ")}`) : null
  )

const checkpointView = (stored: StoredCheckpoint) => {
  const { checkpoint } = stored
  return h(
    "article",
    { class: "checkpoint", "data-checkpoint-id": String(stored.checkpointId) },
    h("h3", {}, `Checkpoint ${stored.checkpointId} · ${new Date(stored.createdAt).toISOString()}`),
    h(
      "p",
      {},
      `retained ${formatCount(checkpoint.retainedTokens)} of ${formatCount(checkpoint.retentionBudget)} tokens from ${formatCount(checkpoint.transcriptLength)} messages; dropped ${checkpoint.dropped.userMessageIds.length} user and ${checkpoint.dropped.otherMessages} other messages${checkpoint.summaryTokens > 0 ? `; summary ${formatCount(checkpoint.summaryTokens)} tokens` : ""}`
    ),
    h(
      "ol",
      { class: "context" },
      checkpoint.context.map((entry) => entryView(entry, checkpoint))
    ),
    checkpoint.batch === null ? null : batchView(checkpoint.batch)
  )
}

export const mount = (root: HTMLElement, info: () => Promise<Info>) => {
  const sessionInput = h("input", {
    id: "session",
    type: "text",
    list: "known-sessions",
    "aria-label": "session id"
  })
  const known = h("datalist", { id: "known-sessions" })
  const showButton = h("button", { type: "button", id: "show-checkpoints" }, "Show")
  const out = h("div", { class: "checkpoints", "aria-live": "polite" })
  root.append(
    h(
      "div",
      { class: "toolbar" },
      h("label", { for: "session" }, "Session "),
      sessionInput,
      known,
      showButton
    ),
    out
  )
  void info().then((data) =>
    known.replaceChildren(...data.sessions.map((session) => h("option", { value: session.sessionId })))
  )

  const show = async () => {
    const session = sessionInput.value.trim()
    if (session === "") return
    out.replaceChildren(h("p", {}, "loading…"))
    const { body } = await json<Outcome<{ checkpoints: ReadonlyArray<StoredCheckpoint> }>>(
      `/api/checkpoints?session=${encodeURIComponent(session)}`
    )
    if (!body.ok)
      return out.replaceChildren(
        h("p", { class: "error-message" }, `${body.error.code}: ${body.error.message}`)
      )
    if (body.result.checkpoints.length === 0)
      return out.replaceChildren(h("p", {}, `No checkpoint is stored for session ${session}.`))
    out.replaceChildren(...body.result.checkpoints.map(checkpointView))
  }
  showButton.addEventListener("click", () => void show())
  sessionInput.addEventListener("keydown", (event) => {
    if (event.key === "Enter") void show()
  })
  return {
    show: (session: string) => {
      sessionInput.value = session
      void show()
    }
  }
}
