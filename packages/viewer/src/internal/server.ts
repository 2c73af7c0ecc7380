/**
 * The viewer's HTTP server: Node's own `http`, bound to 127.0.0.1, every request through the
 * guard, only reads. Routes: the page and its two assets, the live event stream, and JSON for
 * file windows, searches, spill listings and checkpoints.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { Outcome } from "@toolcap/adapters"
import type { Feed } from "./feed.js"
import * as Guard from "./guard.js"
import type { Sources } from "./sources.js"

/** Lines per Read window the page asks for by default, and the most it may ask for. */
export const WINDOW_LINES_MAX = 2000

/** 32 random bytes: unguessable, and short enough to paste. */
const TOKEN_BYTES = 32

const securityHeaders = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolcap viewer</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<div id="app"></div>
<script type="module" src="/app.js"></script>
</body>
</html>
`

export interface ServerConfig {
  readonly feed: Feed
  readonly sources: Sources
  /** The built front end (`app.js`, `app.css`). */
  readonly assetsDir: string
  readonly port?: number | undefined
  readonly info: { readonly dataDir: string; readonly workspace: string; readonly live: boolean }
}

export interface RunningServer {
  readonly port: number
  readonly token: string
  readonly url: string
  readonly close: () => Promise<void>
}

/** HTTP status of a failed outcome: the path is refused, missing, or the request was wrong. */
const statusOf = (outcome: Outcome.Outcome): number => {
  if (outcome.ok) return 200
  switch (outcome.error.code) {
    case "TOOL_PATH_DENIED":
      return 403
    case "TOOL_NOT_FOUND":
      return 404
    case "VIEWER_FAILED":
      return 500
    default:
      return 400
  }
}

const send = (response: http.ServerResponse, status: number, type: string, body: string | Buffer) => {
  response.writeHead(status, { ...securityHeaders, "content-type": type })
  response.end(body)
}

const json = (response: http.ServerResponse, status: number, value: unknown) =>
  send(response, status, "application/json; charset=utf-8", JSON.stringify(value))

const intParam = (url: URL, name: string, fallback: number): number => {
  const value = Number(url.searchParams.get(name) ?? fallback)
  return Number.isSafeInteger(value) ? value : fallback
}

export const start = async (config: ServerConfig): Promise<RunningServer> => {
  const token = randomBytes(TOKEN_BYTES).toString("base64url")
  const assets = new Map<string, Buffer>()
  const asset = (name: string): Buffer | undefined => {
    const cached = assets.get(name)
    if (cached !== undefined) return cached
    try {
      const bytes = fs.readFileSync(`${config.assetsDir}/${name}`)
      assets.set(name, bytes)
      return bytes
    } catch {
      return undefined
    }
  }

  let port = 0

  const route = async (response: http.ServerResponse, url: URL) => {
    switch (url.pathname) {
      case "/":
        return send(response, 200, "text/html; charset=utf-8", page)
      case "/app.js":
      case "/app.css": {
        const bytes = asset(url.pathname.slice(1))
        if (bytes === undefined) {
          return send(
            response,
            500,
            "text/plain; charset=utf-8",
            "the viewer's front end is not built: run pnpm run build"
          )
        }
        return send(
          response,
          200,
          url.pathname.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
          bytes
        )
      }
      case "/api/info":
        return json(response, 200, {
          ...config.info,
          sessions: await config.sources.sessions(),
          // how the live feed fares: open event streams, what they hold, streams closed as stalled
          feed: {
            pages: config.feed.clientCount,
            heldBytes: config.feed.heldBytes,
            dropped: config.feed.dropped
          }
        })
      case "/api/events":
        return config.feed.attach(response)
      case "/api/read": {
        const outcome = await config.sources.read({
          path: url.searchParams.get("path") ?? "",
          offset: Math.max(1, intParam(url, "offset", 1)),
          limit: Math.min(WINDOW_LINES_MAX, Math.max(1, intParam(url, "limit", WINDOW_LINES_MAX)))
        })
        return json(response, statusOf(outcome), outcome)
      }
      case "/api/grep": {
        const outcome = await config.sources.grep({
          path: url.searchParams.get("path") ?? "",
          pattern: url.searchParams.get("pattern") ?? "",
          caseInsensitive: url.searchParams.get("caseInsensitive") === "true"
        })
        return json(response, statusOf(outcome), outcome)
      }
      case "/api/checkpoints": {
        const outcome = await config.sources.checkpoints(url.searchParams.get("session") ?? "")
        return json(response, statusOf(outcome), outcome)
      }
      default:
        return json(response, 404, {
          ok: false,
          error: { code: "VIEWER_NOT_FOUND", message: `no such page: ${url.pathname}` }
        })
    }
  }

  const server = http.createServer((request, response) => {
    const verdict = Guard.check(request, port, token)
    if (!verdict.ok) {
      return json(response, verdict.status, {
        ok: false,
        error: { code: "VIEWER_REFUSED", message: verdict.reason }
      })
    }
    const url = new URL(request.url ?? "/", `http://${request.headers.host}`)
    if (verdict.tokenInUrl && url.pathname === "/") {
      // Trade the URL's token for the cookie, and drop it from the address bar and history.
      url.searchParams.delete("token")
      response.writeHead(303, {
        ...securityHeaders,
        "set-cookie": Guard.tokenCookie(token),
        location: `${url.pathname}${url.search}`
      })
      return response.end()
    }
    route(response, url).catch((cause: unknown) => {
      if (response.headersSent) return response.destroy()
      json(response, 500, { ok: false, error: { code: "VIEWER_FAILED", message: String(cause) } })
    })
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen({ host: "127.0.0.1", port: config.port ?? 0 }, () => resolve())
  })
  port = (server.address() as AddressInfo).port

  const close = () =>
    new Promise<void>((resolve) => {
      config.feed.close()
      server.close(() => resolve())
      server.closeAllConnections()
    })

  return { port, token, url: `http://127.0.0.1:${port}/?token=${token}`, close }
}
