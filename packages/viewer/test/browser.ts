/**
 * One headless Chromium per test file (Debian's `chromium`, installed by scripts/setup.sh),
 * driven by playwright-core. `close()` also checks that no process of it is left.
 */
import * as fs from "node:fs"
import { chromium, type Browser } from "playwright-core"

export const chromiumPath = "/usr/bin/chromium"

/** Screenshots of the views go here (gitignored), for a person to look at after a run. */
export const screenshotDir = new URL("../../../.reports/viewer/", import.meta.url).pathname

/** The pids of live (not zombie) processes whose command line holds `needle`. */
export const processesWith = (needle: string): Array<number> =>
  fs.readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return []
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8")
      const state = fs.readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.[0]
      return cmdline.includes(needle) && state !== "Z" ? [Number(entry)] : []
    } catch {
      return []
    }
  })

export const launch = async (): Promise<{ browser: Browser; close: () => Promise<Array<number>> }> => {
  // a harmless flag that names this launch, so its processes can be found afterwards
  const tag = `--class=toolcap-viewer-e2e-${process.pid}-${Date.now()}`
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", tag]
  })
  const close = async () => {
    await browser.close()
    for (let attempt = 0; attempt < 50 && processesWith(tag).length > 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return processesWith(tag)
  }
  return { browser, close }
}
