// The viewer in headless Chromium, measured side by side with a baseline in the same run:
//
// 1. first paint of the full-output view on a 1 GiB log (open the file, first lines drawn), vs
//    the same on a 1 KiB file: target <= 1 s;
// 2. time to show a page deep in that log (go to line 15,000,000, drawn), on a fresh viewer so
//    Read's line index is cold, vs `tail -n +N FILE | head -n 240` (what a person would run):
//    target <= 1 s;
// 3. first paint of a session with 500 spill files (page load, spill list drawn with all 500),
//    vs a session with 1: target <= 1 s.
//
// Rounds are interleaved (baseline, subject, ...) and medians compared; the machine is shared.
// Every figure is also one `BENCH {json}` line. Temp files are removed at exit. Exits 1 when a
// target is missed.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { Viewer } from "@toolcap/viewer"
import { launch } from "../test/browser.js"
// the shared bench helpers live beside the tools' benches
import { loadAverage, median, runMain, tempDirRemovedOnExit } from "../../tools/bench/benchFixtures.js"

const GiB = 1024 * 1024 * 1024
const DEEP_LINE = 15_000_000
const ROUNDS = Number(process.env["TOOLCAP_BENCH_ROUNDS"] ?? 5)
const TARGET_MS = 1000
const SPILL_FILES = 500

const root = tempDirRemovedOnExit("toolcap-viewer-bench-")

/** "1.2 0.9 0.7": the load averages, printed beside every figure. */
const load = () => loadAverage().replace("load average: ", "").split(" ").slice(0, 3).join(" ")

/** A data dir + workspace; `spills` spill files of ~4 KiB in one session. */
const makeDirs = (name: string, spills: number) => {
  const dir = path.join(root, name)
  const workspace = path.join(dir, "workspace")
  const outputDir = path.join(dir, "data", "scratch", "bench-session", "tool-output")
  fs.mkdirSync(workspace, { recursive: true })
  fs.mkdirSync(outputDir, { recursive: true })
  for (let index = 0; index < spills; index++) {
    fs.writeFileSync(
      path.join(outputDir, `bash-stdout-${1_700_000_000_000 + index}-${index}.log`),
      "x\n".repeat(2048)
    )
  }
  return { workspace, dataDir: path.join(dir, "data") }
}

/** Lines of 20 to 100 bytes (a log's spread), in blocks of 1 MiB repeated up to `bytes`. */
const generate = (file: string, bytes: number) => {
  const lines: Array<string> = []
  let blockBytes = 0
  for (let index = 0; blockBytes < 1024 * 1024; index++) {
    const line = `${"log entry ".repeat(10).slice(0, 19 + ((index * 7919) % 81))}\n`
    lines.push(line)
    blockBytes += line.length
  }
  const block = Buffer.from(lines.join(""), "latin1")
  const fd = fs.openSync(file, "w")
  for (let written = 0; written < bytes; written += block.length) {
    fs.writeSync(fd, block, 0, Math.min(block.length, bytes - written))
  }
  fs.closeSync(fd)
}

const pipeline = (file: string) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn("bash", ["-c", `tail -n +${DEEP_LINE} "$1" | head -n 240 > /dev/null`, "bench", file])
    child.on("error", reject)
    child.on("close", () => resolve(performance.now() - started))
  })

const main = async (): Promise<number> => {
  const big = makeDirs("big", 0)
  const bigFile = path.join(big.workspace, "big.log")
  const smallFile = path.join(big.workspace, "small.log")
  const generatedAt = performance.now()
  generate(bigFile, GiB)
  generate(smallFile, 1024)
  console.log(
    `generated ${fs.statSync(bigFile).size} bytes in ${Math.round(performance.now() - generatedAt)} ms`
  )
  const manySpills = makeDirs("many", SPILL_FILES)
  const oneSpill = makeDirs("one", 1)

  const { browser, close } = await launch()
  const withPage = async <A>(
    dirs: { workspace: string; dataDir: string },
    run: (page: Page, url: string) => Promise<A>
  ) => {
    const viewer = await Viewer.start({ ...dirs, live: false })
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    try {
      return await run(await context.newPage(), viewer.url)
    } finally {
      await context.close()
      await viewer.close()
    }
  }

  /** Opens `file` in the full-output view: ms until its first line is drawn; then, optionally, a deep line. */
  const openFile = (file: string, deepLine?: number) =>
    withPage(big, async (page, url) => {
      await page.goto(`${url}`)
      await page.locator("#tab-output").click()
      const started = performance.now()
      await page.locator("#file-path").fill(file)
      await page.locator("#file-path").press("Enter")
      await page.locator('.line[data-line="1"]').waitFor()
      const firstPaint = performance.now() - started
      if (deepLine === undefined) return { firstPaint, deep: 0 }
      const deepStarted = performance.now()
      await page.locator("#goto-line").fill(String(deepLine))
      await page.locator("#goto-line").press("Enter")
      await page.locator(`.line.target[data-line="${deepLine}"]`).waitFor({ timeout: 120_000 })
      return { firstPaint, deep: performance.now() - deepStarted }
    })

  /** Loads the page and draws the spill list of a session: ms until all its files are listed. */
  const spillList = (dirs: { workspace: string; dataDir: string }, count: number) =>
    withPage(dirs, async (page, url) => {
      const started = performance.now()
      await page.goto(`${url}`)
      await page.locator("#tab-output").click()
      await page.locator(".spills > summary").click()
      await page
        .locator(".spills button.spill")
        .nth(count - 1)
        .waitFor()
      return performance.now() - started
    })

  const rows: Record<string, { figures: Array<number>; baselines: Array<number>; baselineName: string }> = {
    "full-output first paint, 1 GiB log": {
      figures: [],
      baselines: [],
      baselineName: "same view on a 1 KiB file"
    },
    [`show line ${DEEP_LINE.toLocaleString("en-US")} of a 1 GiB log (cold index)`]: {
      figures: [],
      baselines: [],
      baselineName: "shell: tail -n +N, piped to head -n 240"
    },
    [`first paint, session with ${SPILL_FILES} spill files`]: {
      figures: [],
      baselines: [],
      baselineName: "same with 1 spill file"
    }
  }
  const [firstPaint, deep, spills] = Object.values(rows) as [
    (typeof rows)[string],
    (typeof rows)[string],
    (typeof rows)[string]
  ]
  try {
    for (let round = 0; round < ROUNDS; round++) {
      firstPaint.baselines.push((await openFile(smallFile)).firstPaint)
      const opened = await openFile(bigFile, DEEP_LINE)
      firstPaint.figures.push(opened.firstPaint)
      deep.figures.push(opened.deep)
      deep.baselines.push(await pipeline(bigFile))
      spills.baselines.push(await spillList(oneSpill, 1))
      spills.figures.push(await spillList(manySpills, SPILL_FILES))
    }
  } finally {
    const left = await close()
    if (left.length > 0) console.error(`Chromium processes left: ${left.join(", ")}`)
  }

  let missed = 0
  console.log(`\nviewer bench, ${ROUNDS} rounds, medians (load average ${load()})`)
  console.log("| measure | figure (ms) | baseline (ms) | baseline | ratio | target | met |")
  console.log("| --- | --- | --- | --- | --- | --- | --- |")
  for (const [measure, row] of Object.entries(rows)) {
    const figure = Math.round(median(row.figures))
    const baseline = Math.round(median(row.baselines))
    const met = figure <= TARGET_MS
    if (!met) missed++
    const ratio = Number((figure / Math.max(1, baseline)).toFixed(2))
    console.log(
      `| ${measure} | ${figure} | ${baseline} | ${row.baselineName} | ${ratio} | <= ${TARGET_MS} ms | ${met ? "yes" : "NO"} |`
    )
    console.log(
      `BENCH ${JSON.stringify({ issue: 15, measure, figure, baseline, unit: "ms", baselineName: row.baselineName, ratio, target: `<= ${TARGET_MS} ms`, met, load: load() })}`
    )
  }
  return missed
}

runMain(main)
