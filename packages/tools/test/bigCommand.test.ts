/**
 * Commands of any size up to the input bound (rules B13), on real processes: a 1 MB command runs
 * (over the kernel's 128 KiB limit on one argument it is handed to the shell through a 0600 file
 * of the session's scratch, removed when the call ends) with `$0` and `$#` what `bash -c` gives;
 * the boundary on both sides; a command over `bashCommandMaxBytes` is refused as input naming
 * the limit. Through the launcher and without it, in each containment tier this host has.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"
import { Bash, Supervisor } from "@toolcap/tools"
import { cgroupParent, cgroupsOfThisWorker, testEnv } from "./bashFixtures.js"

afterAll(() => assert.deepStrictEqual(cgroupsOfThisWorker(), []))

const ARGUMENT_MAX_BYTES = 128 * 1024 - 1

const tiers: ReadonlyArray<Supervisor.Tier> = cgroupParent() !== undefined ? ["cgroup", "group"] : ["group"]
const variants: ReadonlyArray<{ readonly label: string; readonly supervisor: Supervisor.Options }> =
  tiers.flatMap((containment) => [
    { label: `${containment} tier, launcher`, supervisor: { containment } },
    { label: `${containment} tier, no launcher`, supervisor: { containment, launcher: false } }
  ])

const outputDir = (dataDir: string) => path.join(dataDir, "scratch", "test-session", "tool-output")

/** Command files left in the scratch. */
const commandFiles = (dataDir: string) =>
  (fs.existsSync(outputDir(dataDir)) ? fs.readdirSync(outputDir(dataDir)) : []).filter((name) =>
    name.startsWith("command-")
  )

/**
 * A command of exactly `bytes` UTF-8 bytes: it prints the length of a long variable, `$0`, `$#`
 * and the mode of any command file of the scratch, then pads itself with a comment.
 */
const commandOf = (bytes: number, dataDir: string, fill = "a") => {
  const head = `x=${fill.repeat(1000)}; printf '%s|%s|%s|' "\${#x}" "$0" "$#"; stat -c %a ${outputDir(dataDir)}/command-* 2>/dev/null | tr -d '\\n'; echo\n#`
  const left = bytes - Buffer.byteLength(head)
  const pad =
    fill.repeat(Math.floor(left / Buffer.byteLength(fill))) + "b".repeat(left % Buffer.byteLength(fill))
  const command = head + pad
  assert.strictEqual(Buffer.byteLength(command), bytes)
  return command
}

describe("commands of any size", () => {
  for (const { label, supervisor } of variants) {
    it.live(`${label}: a 1 MB command runs, through a 0600 scratch file removed at the end`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const env = yield* testEnv({}, undefined, supervisor)
          const result = yield* Bash.run({ command: commandOf(1024 * 1024, env.dataDir) }).pipe(
            Effect.provide(env.layer)
          )
          assert.strictEqual(result.exitCode, 0, result.output)
          const [length, zero, count, mode] = result.stdout.trim().split("|")
          assert.strictEqual(length, "1000")
          assert.strictEqual(path.basename(zero!), "bash")
          assert.strictEqual(count, "0")
          assert.strictEqual(mode, "600")
          assert.deepStrictEqual(commandFiles(env.dataDir), [])
        })
      )
    )
  }

  it.live(
    "the boundary: a command of the argument limit runs as -c, one byte more through a file; multi-byte text counts bytes",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const env = yield* testEnv()
          const run = (command: string) => Bash.run({ command }).pipe(Effect.provide(env.layer))
          const at = yield* run(commandOf(ARGUMENT_MAX_BYTES, env.dataDir))
          assert.strictEqual(at.stdout.trim(), `1000|${at.stdout.split("|")[1]}|0|`, "no file at the limit")
          const over = yield* run(commandOf(ARGUMENT_MAX_BYTES + 1, env.dataDir))
          assert.isTrue(over.stdout.trim().endsWith("|0|600"), over.output)
          // 2-byte characters: fewer UTF-16 units than the limit, more bytes
          const wide = yield* run(commandOf(ARGUMENT_MAX_BYTES + 2, env.dataDir, "é"))
          assert.isTrue(wide.stdout.trim().endsWith("|0|600"), wide.output)
          assert.strictEqual(wide.stdout.split("|")[0], "1000")
          assert.deepStrictEqual(commandFiles(env.dataDir), [])
        })
      )
  )

  it.live("a timed-out long command is stopped and its file removed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const env = yield* testEnv()
        const command = `sleep 30\n#${"z".repeat(300_000)}`
        const exit = yield* Bash.run({ command, timeout: 1 }).pipe(Effect.provide(env.layer), Effect.flip)
        assert.strictEqual(exit.code, "TOOL_TIMEOUT")
        assert.deepStrictEqual(commandFiles(env.dataDir), [])
      })
    )
  )

  it.live("a command over bashCommandMaxBytes is refused as input naming the limit, nothing run", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const env = yield* testEnv({ bashCommandMaxBytes: 200_000 })
        const error = yield* Bash.run({ command: `touch ran\n#${"z".repeat(200_000)}` }).pipe(
          Effect.provide(env.layer),
          Effect.flip
        )
        assert.strictEqual(error.code, "TOOL_INVALID_INPUT")
        if (error instanceof ToolError.ToolInvalidInput) {
          assert.strictEqual(error.field, "command")
          assert.include(error.message, "200000 bytes (bashCommandMaxBytes)")
        }
        assert.isFalse(fs.existsSync(path.join(env.workspace, "ran")))
        // the same size under the default bound runs
        const env2 = yield* testEnv()
        const ran = yield* Bash.run({ command: `touch ran\n#${"z".repeat(200_000)}` }).pipe(
          Effect.provide(env2.layer)
        )
        assert.strictEqual(ran.exitCode, 0)
        assert.isTrue(fs.existsSync(path.join(env2.workspace, "ran")))
      })
    )
  )
})
