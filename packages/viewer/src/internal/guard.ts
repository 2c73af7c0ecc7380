/**
 * Who may talk to the viewer: every request is checked, page and API alike. It must name the
 * viewer's own host (`127.0.0.1:<port>` or `localhost:<port>`: a DNS-rebinding page sends its own
 * name), come from no other origin, be a read (GET/HEAD), and carry the token — in the URL the
 * viewer printed, then in an HttpOnly SameSite=Strict cookie the viewer sets in answer.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"

export type Verdict =
  | { readonly ok: true; readonly tokenInUrl: boolean }
  | { readonly ok: false; readonly status: number; readonly reason: string }

/**
 * The cookie's name, derived from the token. Cookies are not port-scoped: any page on 127.0.0.1
 * can set a cookie for the viewer's host, and one of the viewer's own name and path would replace
 * the owner's and lock them out. A name only the token's holder knows cannot be aimed at; it also
 * keeps two viewers on one machine apart. 16 hex digits of SHA-256 cannot be turned back into the
 * token.
 */
export const cookieName = (token: string): string =>
  `toolcap_viewer_${createHash("sha256").update(token).digest("hex").slice(0, 16)}`

const sameText = (a: string, b: string): boolean => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/** Every value the header gives `name`: a browser sends duplicates (other paths, other ports) too. */
const cookieValues = (header: string | undefined, name: string): Array<string> =>
  (header ?? "").split(";").flatMap((part) => {
    const [key, ...rest] = part.trim().split("=")
    return key === name ? [rest.join("=")] : []
  })

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
  // any one matching value will do: a planted duplicate cannot shadow the owner's
  if (cookieValues(request.headers.cookie, cookieName(token)).some((value) => sameText(value, token)))
    return { ok: true, tokenInUrl: false }
  return { ok: false, status: 401, reason: "missing or wrong token: open the URL the viewer printed" }
}

/** The cookie that carries the token after the first request. */
export const tokenCookie = (token: string): string =>
  `${cookieName(token)}=${token}; HttpOnly; SameSite=Strict; Path=/`
