/** The viewer's page: three views behind tabs, all reading the local server's JSON and events. */
import * as Checkpoints from "./checkpoints.js"
import { h, json } from "./dom.js"
import * as FullOutput from "./fullOutput.js"
import * as Live from "./live.js"
import type { Info } from "./types.js"

const views = ["live", "output", "checkpoints"] as const
type View = (typeof views)[number]
const titles: Record<View, string> = { live: "Live calls", output: "Full output", checkpoints: "Checkpoints" }

const app = document.getElementById("app")!
const panels = Object.fromEntries(
  views.map((view) => [
    view,
    h("section", { id: `view-${view}`, role: "tabpanel", "aria-labelledby": `tab-${view}`, class: "view" })
  ])
) as Record<View, HTMLElement>
const tabs = views.map((view) =>
  h(
    "button",
    { id: `tab-${view}`, role: "tab", type: "button", "aria-controls": `view-${view}`, "data-view": view },
    titles[view]
  )
)
const tablist = h("nav", { role: "tablist", "aria-label": "views" }, tabs)
app.append(h("header", {}, h("h1", {}, "toolcap viewer"), tablist), h("main", {}, Object.values(panels)))

const select = (view: View, focus = false) => {
  for (const tab of tabs) {
    const selected = tab.dataset["view"] === view
    tab.setAttribute("aria-selected", String(selected))
    tab.tabIndex = selected ? 0 : -1
    if (selected && focus) tab.focus()
  }
  for (const name of views) panels[name].hidden = name !== view
  if (location.hash !== `#${view}`) history.replaceState(null, "", `#${view}`)
}
for (const tab of tabs) tab.addEventListener("click", () => select(tab.dataset["view"] as View))
tablist.addEventListener("keydown", (event) => {
  const current = views.indexOf((document.activeElement as HTMLElement | null)?.dataset["view"] as View)
  if (current < 0) return
  const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0
  if (step === 0) return
  event.preventDefault()
  select(views[(current + step + views.length) % views.length]!, true)
})

let infoRequest: Promise<Info> | undefined
const info = () => (infoRequest ??= json<Info>("/api/info").then((response) => response.body))

const fullOutput = FullOutput.mount(panels.output, info)
Live.mount(panels.live, {
  live: info().then((data) => data.live),
  openFile: (path, line) => {
    select("output")
    fullOutput.open(path, line)
  }
})
Checkpoints.mount(panels.checkpoints, info)

const initial = location.hash.slice(1)
select(views.includes(initial as View) ? (initial as View) : "live")
