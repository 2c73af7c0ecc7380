/**
 * Who may talk to the viewer: every request is checked, page and API alike. It must name the
 * viewer's own host (`127.0.0.1:<port>` or `localhost:<port>`: a DNS-rebinding page sends its own
 * name), come from no other origin, be a read (GET/HEAD), and carry the token — in the URL the
 * viewer printed, then in an HttpOnly SameSite=Strict cookie the viewer sets in answer.
 */
import { timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"

export type Verdict =
  | { readonly ok: true; readonly tokenInUrl: boolean }
  | { readonly ok: false; readonly status: number; readonly reason: string }

/** Cookies are not port-scoped: the port in the name keeps two viewers on one machine apart. */
export const cookieName = (port: number): string => `toolcap_viewer_${port}`

const sameText = (a: string, b: string): boolean => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

const cookieValue = (header: string | undefined, name: string): string | undefined => {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=")
    if (key === name) return rest.join("=")
  }
  return undefined
}

export const check = (request: IncomingMessage, port: number, token: string): Verdict => {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return { ok: false, status: 405, reason: "the viewer is read-only: only GET and HEAD are answered" }
  }
  const host = request.headers.host ?? ""
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
    return {
      ok: false,
      status: 421,
      reason: `unexpected Host header: open the viewer at http://127.0.0.1:${port}/`
    }
  }
  const origin = request.headers.origin
  if (origin !== undefined && origin !== `http://${host}`) {
    return { ok: false, status: 403, reason: "cross-origin requests are refused" }
  }
  if (request.headers["sec-fetch-site"] === "cross-site") {
    return { ok: false, status: 403, reason: "cross-site requests are refused" }
  }
  const url = new URL(request.url ?? "/", `http://${host}`)
  const fromUrl = url.searchParams.get("token")
  if (fromUrl !== null && sameText(fromUrl, token)) return { ok: true, tokenInUrl: true }
  const fromCookie = cookieValue(request.headers.cookie, cookieName(port))
  if (fromCookie !== undefined && sameText(fromCookie, token)) return { ok: true, tokenInUrl: false }
  return { ok: false, status: 401, reason: "missing or wrong token: open the URL the viewer printed" }
}

/** The cookie that carries the token after the first request. */
export const tokenCookie = (port: number, token: string): string =>
  `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`
