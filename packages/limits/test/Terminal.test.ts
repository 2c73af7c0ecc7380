// The terminal renderer (rules T1-T4): differential against a real emulator (@xterm/headless),
// and its own laws (no control byte out, chunking does not matter, bounded rows, exact counts).
//
// The generator's alphabet: text runs of printable ASCII and a few width-1 letters (é ß Ω ж),
// `\n`, `\r`, `\r\n`, backspace, BEL, NUL, DEL; SGR in 7-bit and 8-bit (U+009B) form; cursor up,
// down, forward, back, next/previous line, column (CHA, HPA), row (VPA), position (CUP),
// relative (HPR, VPR); erase in line 0/1/2, erase in display 0/1/2; erase/delete/insert
// characters; save/restore (ESC 7/8, CSI s/u); index, next line, reverse index (7-bit and C1);
// private modes (?25, ?2004, ?1); OSC titles with BEL and ST (7-bit and U+009C) and OSC 8
// hyperlinks; DCS strings; charset designations (`ESC(B`, `ESC(0`, `ESC)0`) with SO/SI; keypad
// modes (ESC =, ESC >); device queries (CSI 5n, CSI c). Sequences may be split across chunks.
//
// What we knowingly differ from xterm in, and why (kept out of the generator):
// - a tab is kept as one `\t` cell (xterm moves to the next tab stop): the model reads text;
// - wide (CJK, emoji) and combining characters take one cell each (xterm: two and zero): the
//   widths only matter to partial overwrites, and a width table is not worth its cost here;
// - ED 3 (erase scrollback) keeps the lines: they were printed and the model keeps them;
// - scroll regions (DECSTBM), insert/delete lines, scroll up/down, the alternate screen, origin
//   mode, national charsets and RIS are not emulated (RIS clears the screen only): output that is
//   piped, as a tool's is, does not draw full-screen interfaces;
// - a row is at most `maxLineChars` wide; past it the last row wraps into the next string with no
//   `\n` (xterm wraps into a wrapped row, which the comparison joins), a row above drops the rest.
import { assert, describe, it } from "@effect/vitest"
import { Terminal } from "@toolcap/limits"
import { Terminal as XTerm } from "@xterm/headless"
import { Effect, FastCheck as fc } from "effect"

const ESC = "\x1b"
const CSI = `${ESC}[`

const letters = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 .,:%#-_/|+=*()éßΩж".split(""))
const textRun = fc.array(letters, { minLength: 1, maxLength: 12 }).map((chars) => chars.join(""))
const count = fc.integer({ min: 0, max: 6 })
const csi = (final: string) => count.map((n) => `${CSI}${n === 0 ? "" : n}${final}`)
const token = fc.oneof(
  { weight: 12, arbitrary: textRun },
  { weight: 5, arbitrary: fc.constantFrom("\n", "\r", "\r\n", "\b", "\x07", "\x00", "\x7f") },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      `${CSI}31m`,
      `${CSI}0m`,
      `${CSI}m`,
      `${CSI}1;32m`,
      `${CSI}38;5;208m`,
      `${CSI}38;2;1;2;3m`,
      "\x9b33m"
    )
  },
  {
    weight: 6,
    arbitrary: fc.oneof(
      ...["A", "B", "C", "D", "E", "F", "G", "`", "d", "a", "e", "X", "P", "@"].map(csi),
      fc.tuple(count, count).map(([row, column]) => `${CSI}${row};${column}H`),
      fc.integer({ min: 0, max: 2 }).map((mode) => `${CSI}${mode}K`),
      fc.integer({ min: 0, max: 2 }).map((mode) => `${CSI}${mode}J`),
      fc.constantFrom(`${CSI}K`, `${CSI}J`, `${CSI}s`, `${CSI}u`, `${ESC}7`, `${ESC}8`)
    )
  },
  { weight: 1, arbitrary: fc.constantFrom(`${ESC}D`, `${ESC}E`, `${ESC}M`, "\x84", "\x85", "\x8d") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      `${CSI}?25l`,
      `${CSI}?25h`,
      `${CSI}?2004h`,
      `${CSI}?1l`,
      `${ESC}]0;a title\x07`,
      `${ESC}]2;title${ESC}\\`,
      `${ESC}]0;t\x9c`,
      `${ESC}]8;;https://example.com/x${ESC}\\`,
      `${ESC}]8;;${ESC}\\`,
      `${ESC}Pq#0;2;0;0;0${ESC}\\`,
      `${ESC}(B`,
      `${ESC}(0`,
      `${ESC})0`,
      "\x0e",
      "\x0f",
      `${ESC}=`,
      `${ESC}>`,
      `${CSI}5n`,
      `${CSI}c`
    )
  }
)
const stream = fc.array(token, { maxLength: 60 }).map((tokens) => tokens.join(""))
/** Cut points into a stream: chunks that split sequences anywhere (but not a surrogate pair). */
const cuts = fc.array(fc.nat(), { maxLength: 8 })

/** A cut point moved off the middle of a surrogate pair: the renderer reads decoded text, never half a character. */
const offSurrogate = (text: string, point: number): number =>
  point > 0 && /[\udc00-\udfff]/.test(text[point] ?? "") && /[\ud800-\udbff]/.test(text[point - 1]!)
    ? point - 1
    : point

const chunked = (text: string, at: ReadonlyArray<number>): Array<string> => {
  const points = [
    ...new Set(at.map((point) => (text.length === 0 ? 0 : offSurrogate(text, point % text.length))))
  ].toSorted((a, b) => a - b)
  const chunks: Array<string> = []
  let from = 0
  for (const point of points) {
    chunks.push(text.slice(from, point))
    from = point
  }
  chunks.push(text.slice(from))
  return chunks
}

const renderChunks = (chunks: ReadonlyArray<string>, options: Terminal.Options) => {
  const renderer = Terminal.make(options)
  let text = ""
  for (const chunk of chunks) text += renderer.push(chunk).join("")
  text += renderer.end().join("")
  return { text, counts: renderer.counts() }
}

/** Lines as compared: trailing blanks trimmed, trailing empty lines dropped. */
const comparable = (lines: ReadonlyArray<string>): Array<string> => {
  const trimmed = lines.map((line) => line.replace(/ +$/, ""))
  while (trimmed.length > 0 && trimmed[trimmed.length - 1] === "") trimmed.pop()
  return trimmed
}

/** xterm's buffer read back (scrollback and screen), wrapped rows joined to their line. */
const xtermLines = (input: string, columns: number, rows: number): Effect.Effect<Array<string>> =>
  Effect.async<Array<string>>((resume) => {
    const terminal = new XTerm({
      cols: columns,
      rows,
      convertEol: true,
      scrollback: 10_000,
      logLevel: "off",
      allowProposedApi: true
    })
    terminal.write(input, () => {
      const buffer = terminal.buffer.active
      const lines: Array<string> = []
      for (let index = 0; index < buffer.length; index++) {
        const line = buffer.getLine(index)!
        const text = line.translateToString(true)
        if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text
        else lines.push(text)
      }
      terminal.dispose()
      resume(Effect.succeed(comparable(lines)))
    })
  })

/** A stream as a JS literal, DEL and C1 escaped too (JSON leaves them raw). */
const show = (text: string): string =>
  JSON.stringify(text).replace(
    /[\x7f-\x9f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

// oxlint-disable-next-line no-control-regex -- the control characters are what is matched
const FORBIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/

describe("Terminal", () => {
  it.effect.prop(
    "renders what xterm shows: generated streams of text and control sequences, wide screen",
    { input: stream, at: cuts },
    ({ at, input }) =>
      Effect.gen(function* () {
        // wide and tall enough that nothing wraps or scrolls: the window is the whole screen
        const rendered = renderChunks(chunked(input, at), { windowLines: 100, maxLineChars: 2000 })
        const expected = yield* xtermLines(input, 2000, 100)
        assert.deepStrictEqual(comparable(rendered.text.split("\n")), expected, show(input))
      }),
    { timeout: 120_000, fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "renders what xterm shows: a screen of 4 rows, so the window scrolls and clamps cursor moves",
    { input: stream, at: cuts },
    ({ at, input }) =>
      Effect.gen(function* () {
        const rendered = renderChunks(chunked(input, at), { windowLines: 4, maxLineChars: 2000 })
        const expected = yield* xtermLines(input, 2000, 4)
        assert.deepStrictEqual(comparable(rendered.text.split("\n")), expected, show(input))
      }),
    { timeout: 120_000, fastCheck: { numRuns: 200 } }
  )

  it.prop(
    "no control but \\t and \\n in the output, and chunking does not change it",
    { input: fc.oneof(stream, fc.string({ unit: "binary", maxLength: 200 })), at: cuts },
    ({ at, input }) => {
      const whole = Terminal.render(input)
      const split = renderChunks(chunked(input, at), {})
      assert.isFalse(FORBIDDEN.test(whole.text), JSON.stringify(whole.text))
      assert.strictEqual(split.text, whole.text)
      assert.deepStrictEqual(split.counts, whole.counts)
    },
    { fastCheck: { numRuns: 1000 } }
  )

  it.prop(
    "text with no control passes unchanged and counts nothing",
    { input: fc.string({ unit: fc.constantFrom(..."ab \té\n日".split("")), maxLength: 300 }) },
    ({ input }) => {
      const rendered = Terminal.render(input)
      assert.strictEqual(rendered.text, input)
      assert.isFalse(Terminal.changed(rendered.counts))
    }
  )

  it.prop(
    "firstControl finds the first byte a terminal acts on, as a byte-by-byte scan does",
    {
      bytes: fc
        .tuple(
          fc.integer({ min: 0, max: 5000 }),
          fc.array(
            fc.tuple(
              fc.nat(),
              // single controls and C1 pairs (C2 9B is CSI; C2 A9 is ©, not a control)
              fc.constantFrom(
                [0x00],
                [0x07],
                [0x09],
                [0x0a],
                [0x0d],
                [0x1b],
                [0x1f],
                [0x7f],
                [0xc2],
                [0xc2, 0x9b],
                [0xc2, 0x85],
                [0xc2, 0xa9],
                [0xc3, 0xa9]
              )
            ),
            { maxLength: 4 }
          )
        )
        .map(([length, marks]) => {
          const bytes = new Uint8Array(length).fill(0x61)
          for (const [at, sequence] of marks)
            sequence.forEach((byte, offset) => {
              if (length > 0) bytes[(at + offset) % length] = byte
            })
          return bytes
        })
    },
    ({ bytes }) => {
      let expected = -1
      for (let index = 0; index < bytes.length && expected === -1; index++) {
        const byte = bytes[index]!
        const next = index + 1 < bytes.length ? bytes[index + 1]! : 0x80
        const control =
          (byte < 0x20 && byte !== 0x09 && byte !== 0x0a) ||
          byte === 0x7f ||
          (byte === 0xc2 && next >= 0x80 && next <= 0x9f)
        if (control) expected = index
      }
      assert.strictEqual(Terminal.firstControl(bytes), expected)
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it("a \\r progress bar becomes its last frame, counted; colour codes are counted", () => {
    let input = ""
    for (let percent = 1; percent <= 50; percent++) input += `\rprogress ${percent * 2}%`
    input += `\n${CSI}31mERROR${CSI}0m\n`
    const rendered = Terminal.render(input)
    assert.strictEqual(rendered.text, "progress 100%\nERROR\n")
    assert.strictEqual(rendered.counts.progressFrames, 49)
    assert.strictEqual(rendered.counts.colourCodes, 2)
    assert.isTrue(Terminal.changedBeyondColour(rendered.counts))
  })

  it("\\r then ESC[K redraws (the pattern filters render as garbage) keep the last frame", () => {
    const rendered = Terminal.render(`downloading 10%\r${CSI}Kdownloading 9%\r${CSI}Kdone\n`)
    assert.strictEqual(rendered.text, "done\n")
    assert.strictEqual(rendered.counts.progressFrames, 2)
  })

  it("multi-line progress (cursor up, erase line, redraw) keeps the final state of each row", () => {
    const frame = (a: number, b: number) => `${CSI}2Klayer1 ${a}%\n${CSI}2Klayer2 ${b}%\n`
    const rendered = Terminal.render(
      `pulling\n${frame(0, 0)}${CSI}2A${frame(50, 10)}${CSI}2A${frame(100, 100)}ok\n`
    )
    assert.strictEqual(rendered.text, "pulling\nlayer1 100%\nlayer2 100%\nok\n")
    assert.strictEqual(rendered.counts.progressFrames, 4)
  })

  it("colour only: changed, not beyond colour", () => {
    const rendered = Terminal.render(`${CSI}32m✓${CSI}39m passes\n`)
    assert.strictEqual(rendered.text, "✓ passes\n")
    assert.isTrue(Terminal.changed(rendered.counts))
    assert.isFalse(Terminal.changedBeyondColour(rendered.counts))
  })

  it("an OSC 8 hyperlink keeps its text; a title is dropped; both terminators", () => {
    const rendered = Terminal.render(
      `${ESC}]0;my title\x07see ${ESC}]8;;https://example.com${ESC}\\the docs${ESC}]8;;\x07.\n`
    )
    assert.strictEqual(rendered.text, "see the docs.\n")
    assert.strictEqual(rendered.counts.otherSequences, 3)
  })

  it("a line wider than maxLineChars wraps into pieces whose concatenation is the line", () => {
    const renderer = Terminal.make({ maxLineChars: 10, windowLines: 3 })
    const pieces = [...renderer.push("x".repeat(25)), ...renderer.push("y\n"), ...renderer.end()]
    assert.deepStrictEqual(pieces, ["xxxxxxxxxx", "xxxxxxxxxx", "xxxxxy\n"])
  })

  it("memory is bounded by the window: lines become final after windowLines more rows", () => {
    const renderer = Terminal.make({ windowLines: 5 })
    let emitted = 0
    for (let line = 0; line < 1000; line++) emitted += renderer.push(`line ${line}\n`).length
    // emitted in batches: at most twice the window is held
    assert.isAtLeast(emitted, 1000 - 10)
    assert.strictEqual(emitted + renderer.end().length, 1000)
  })

  it("the cursor cannot move above the window: rows emitted are final", () => {
    const rendered = Terminal.render(`a\nb\nc\nd\n${CSI}9Az\n`, { windowLines: 2 })
    // the window holds "d" and the empty row below: cursor up stops at "d"
    assert.strictEqual(rendered.text, "a\nb\nc\nz\n")
  })

  it("surrogate pairs are one cell each", () => {
    const rendered = Terminal.render("𝒜𝒜𝒜\r𝒝\n")
    assert.strictEqual(rendered.text, "𝒝𝒜𝒜\n")
  })

  it("DEC special graphics draw lines (ESC(0), and back to ASCII (ESC(B)", () => {
    assert.strictEqual(Terminal.render(`${ESC}(0lqqk${ESC}(B ok`).text, "┌──┐ ok")
  })

  it("a sequence split across chunks is parsed as one", () => {
    const renderer = Terminal.make()
    const out = [
      ...renderer.push("red: \x1b"),
      ...renderer.push("[3"),
      ...renderer.push("1mR\n"),
      ...renderer.end()
    ]
    assert.deepStrictEqual(out, ["red: R\n"])
    assert.strictEqual(renderer.counts().colourCodes, 1)
  })

  it.prop(
    "stripColour: rendering the plain bytes it leaves, plus its colour codes, is rendering the read",
    {
      parts: fc.array(
        fc.oneof(
          { weight: 6, arbitrary: textRun.map((text) => Array.from(Buffer.from(text, "utf8"))) },
          {
            weight: 5,
            arbitrary: fc
              .constantFrom(`${CSI}31m`, `${CSI}0m`, `${CSI}m`, `${CSI}1;32m`, `${CSI}38:5:208m`, "\n", "\t")
              .map((text) => Array.from(Buffer.from(text, "latin1")))
          },
          // what the fast path must leave to the renderer, and UTF-8 cut apart
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              [0x1b],
              [0x1b, 0x5b],
              [0x1b, 0x5b, 0x3f, 0x32, 0x35, 0x6c],
              [0x1b, 0x5b, 0x32, 0x4b],
              [0x0d],
              [0xc2, 0x9b],
              [0xc2],
              [0xc3],
              [0xa9],
              [0xe2, 0x82],
              [0xf0, 0x9f, 0x98]
            )
          }
        ),
        { maxLength: 30 }
      )
    },
    ({ parts }) => {
      const bytes = Uint8Array.from(parts.flat())
      const stripped = Terminal.stripColour(bytes)
      if (stripped === undefined) return
      const expected = Terminal.render(Buffer.from(bytes).toString("utf8"))
      const rest = Terminal.render(Buffer.from(stripped.plain).toString("utf8"))
      const last = Terminal.render(Buffer.from(stripped.pending).toString("utf8"))
      assert.strictEqual(rest.text + last.text, expected.text)
      assert.deepStrictEqual(
        {
          ...rest.counts,
          colourCodes: rest.counts.colourCodes + stripped.colourCodes + last.counts.colourCodes,
          otherSequences: rest.counts.otherSequences + last.counts.otherSequences
        },
        expected.counts
      )
      assert.strictEqual(Terminal.firstControl(stripped.plain), -1)
      // written into a caller's buffer: the same bytes
      const into = new Uint8Array(bytes.length + 3).fill(0x2a)
      assert.deepStrictEqual(Array.from(Terminal.stripColour(bytes, into)!.plain), Array.from(stripped.plain))
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it("stripColour removes each colour code of coloured lines and leaves other sequences to the renderer", () => {
    const line = `${CSI}32mok${CSI}0m\n`
    const stripped = Terminal.stripColour(Buffer.from(line.repeat(3) + `${CSI}1`, "latin1"))!
    assert.strictEqual(Buffer.from(stripped.plain).toString("latin1"), "ok\n".repeat(3))
    assert.strictEqual(stripped.colourCodes, 6)
    assert.strictEqual(Buffer.from(stripped.pending).toString("latin1"), `${CSI}1`)
    assert.isUndefined(Terminal.stripColour(Buffer.from(`a${CSI}2Kb`, "latin1")))
    // a continuation byte after the code: removing it would join the bytes around it
    assert.isUndefined(Terminal.stripColour(Uint8Array.from([0xc3, 0x1b, 0x5b, 0x6d, 0xa9])))
  })
})
