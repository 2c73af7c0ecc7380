/**
 * How a command reaches the shell (rules B13): as the argument of `-c` when it fits the kernel's
 * limit on one argument, else in a file of the session's scratch (created exclusively, 0600)
 * that `-c` sources with `. <file>`: the shell's `$0` and positional parameters stay what `-c`
 * gives, stdin stays closed. The file lives in the call's scope: removed when the call ends,
 * after its tree was stopped.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { ToolError } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"

/**
 * MAX_ARG_STRLEN: execve refuses (E2BIG, "Argument list too long") one argument of more than 32
 * pages of 4 KiB, its terminating NUL included.
 */
export const ARGUMENT_MAX_BYTES = 128 * 1024 - 1

/** A path as one POSIX shell word (single quotes hold any character but NUL, in bash and sh). */
const posixWord = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`

/** Whether a command fits one argument (a UTF-16 unit is at most 3 UTF-8 bytes). */
export const fitsArgument = (command: string): boolean =>
  command.length * 3 <= ARGUMENT_MAX_BYTES || Buffer.byteLength(command) <= ARGUMENT_MAX_BYTES

/** The shell's arguments for `command`; a file it needed is removed when the scope closes. */
export const shellArgs = (
  command: string,
  shellFile: string,
  scratch: Scratch.ScratchValue
): Effect.Effect<ReadonlyArray<string>, ToolError.ToolSpawnFailed, Scope.Scope> =>
  fitsArgument(command)
    ? Effect.succeed(["-c", command])
    : Effect.acquireRelease(scratch.write("command", Buffer.from(command, "utf8")), (file) =>
        Effect.sync(() => Option.map(file, (written) => fs.rmSync(written, { force: true })))
      ).pipe(
        Effect.flatMap((file) =>
          Option.isSome(file)
            ? Effect.succeed(["-c", `. ${posixWord(file.value)}`])
            : Effect.fail(
                new ToolError.ToolSpawnFailed({
                  command: `${shellFile} -c`,
                  reason: `the command is longer than ${ARGUMENT_MAX_BYTES} bytes (the kernel's limit on one argument), so it is handed to the shell through a file in the session scratch directory ${scratch.sessionDir}, and that file could not be written (read-only or full disk?); free space there or pass a shorter command`
                })
              )
        )
      )
