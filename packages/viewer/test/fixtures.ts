import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { Viewer } from "@toolcap/viewer"

/** A temp dir with `workspace/` and `data/`; `remove()` deletes it. */
export const makeDirs = (prefix = "toolcap-viewer-") => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const workspace = path.join(root, "workspace")
  const dataDir = path.join(root, "data")
  fs.mkdirSync(workspace)
  fs.mkdirSync(dataDir)
  return { root, workspace, dataDir, remove: () => fs.rmSync(root, { recursive: true, force: true }) }
}

export interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** One GET with the headers given verbatim (a browser would not let a test set Host or Origin). */
export const get = (
  port: number,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  method = "GET"
) =>
  new Promise<Answer>((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        path: pathAndQuery,
        method,
        headers: { host: `127.0.0.1:${port}`, ...headers }
      },
      (response) => {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (data: string) => (body += data))
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body })
        )
      }
    )
    request.on("error", reject)
    request.end()
  })

export const startViewer = async (dirs: { workspace: string; dataDir: string }) =>
  Viewer.start({ workspace: dirs.workspace, dataDir: dirs.dataDir })
