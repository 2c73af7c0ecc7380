// Measures the default TokenEstimator against real BPE tokenizers (o200k_base, cl100k_base from
// the js-tiktoken package, which ships its ranks). Not part of `pnpm bench`: js-tiktoken is not a
// dependency of toolcap. Install it anywhere and point at it:
//   npm install --prefix /tmp/tok js-tiktoken@1.0.21
//   node --conditions=@toolcap/source --import tsx bench/estimator-error.ts /tmp/tok/node_modules/js-tiktoken
// The sample is this repository's own TypeScript sources, its Markdown, its package.json files,
// and a multilingual text below, cut into 4,000-character chunks.
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { TokenEstimator } from "@toolcap/checkpoint"
import * as Arr from "effect/Array"
import * as Order from "effect/Order"

const multilingual = `Die Werkzeuge eines Programmierassistenten liefern oft sehr lange Ausgaben. Damit der Kontext gesund bleibt, werden Ergebnisse begrenzt, ohne Daten stillschweigend zu verfälschen.
Le point de contrôle conserve uniquement les messages de l'utilisateur, du plus récent au plus ancien, jusqu'au budget de vingt mille jetons.
Инструменты агента возвращают длинные результаты. Контрольная точка сохраняет только сообщения пользователя, начиная с самых новых.
检查点只保留用户消息，从最新的开始，直到两万个令牌的预算用完。跨越预算的那条消息保留前面百分之七十五和后面百分之二十五。
チェックポイントはユーザーのメッセージだけを新しい順に保持し、予算を超えるメッセージは先頭と末尾を残して切り詰められます。
El punto de control conserva solo los mensajes del usuario, del más reciente al más antiguo, hasta agotar el presupuesto.
체크포인트는 사용자 메시지만 최신 순으로 예산까지 유지합니다. 원본 기록은 절대 다시 쓰지 않습니다.
Emoji and symbols: 🚀 ✅ ⚠️ → ← ≤ ≥ — “quoted” ‘text’ … 😀😃😄 ½ ¼ € £ ¥
`

const root = path.resolve(import.meta.dirname, "..", "..", "..")
const walk = (dir: string, keep: (name: string) => boolean, out: Array<string> = []): Array<string> => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (["node_modules", "dist", ".git", ".turbo"].includes(entry.name)) continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) walk(full, keep, out)
    else if (keep(entry.name)) out.push(full)
  }
  return Arr.sort(out, Order.string)
}
const chunks = (texts: ReadonlyArray<string>): Array<string> =>
  texts.flatMap((text) => {
    const out: Array<string> = []
    for (let at = 0; at < text.length; at += 4000) out.push(text.slice(at, at + 4000))
    return out
  })
const read = (files: ReadonlyArray<string>) => files.map((file) => fs.readFileSync(file, "utf8"))

const samples: Record<string, Array<string>> = {
  "TypeScript (repo sources)": chunks(read(walk(path.join(root, "packages"), (n) => n.endsWith(".ts")))),
  "Markdown (repo docs)": chunks(read(walk(root, (n) => n.endsWith(".md")))),
  "JSON (package.json)": chunks(read(walk(root, (n) => n === "package.json"))),
  multilingual: chunks([multilingual.repeat(4)])
}

const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`

const modulePath = process.argv[2]
if (modulePath === undefined) {
  console.error("usage: estimator-error.ts <path to the js-tiktoken package>")
  process.exit(2)
}
const tiktoken = (await import(pathToFileURL(path.join(modulePath, "dist", "index.js")).href)) as {
  getEncoding: (name: string) => { encode: (text: string) => Array<number> }
}
const encodings = ["o200k_base", "cl100k_base"] as const
const encoders = encodings.map((name) => tiktoken.getEncoding(name))

console.log(
  `| sample | chunks | ${encodings.map((e) => `${e}: total / mean / worst under / worst over`).join(" | ")} |`
)
console.log(`|---|---|${encodings.map(() => "---").join("|")}|`)
for (const [name, texts] of Object.entries(samples)) {
  const cells = encoders.map((encoder) => {
    let estimated = 0
    let actual = 0
    const errors = texts.map((text) => {
      const e = TokenEstimator.estimate(text)
      const a = encoder.encode(text).length
      estimated += e
      actual += a
      return (e - a) / Math.max(1, a)
    })
    const mean = errors.reduce((s, x) => s + x, 0) / errors.length
    return `${pct((estimated - actual) / actual)} / ${pct(mean)} / ${pct(Math.min(0, ...errors))} / ${pct(Math.max(0, ...errors))}`
  })
  console.log(`| ${name} | ${texts.length} | ${cells.join(" | ")} |`)
}
