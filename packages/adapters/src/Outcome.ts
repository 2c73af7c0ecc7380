/**
 * The wire shape every non-Effect surface answers with (Promise API, MCP, AI SDK, CLI): a tool
 * call either succeeded, `{ ok: true, result }`, or failed with a typed tool error,
 * `{ ok: false, error: { code, message, ...fields } }` — errors are values carrying the stable
 * wire `code` (rules E1, E3), never thrown strings. A Bash timeout's partial result travels as
 * `error.partial`.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * A tool error as JSON: the stable `code`, a message saying what to do next, and the error's own
 * fields (`path`, `reason`, `partial`, `killedPids`, ...).
 *
 * @since 0.1.0
 * @category models
 */
export interface WireError {
  readonly code: string
  readonly message: string
  readonly [field: string]: unknown
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Success<A = unknown> {
  readonly ok: true
  readonly result: A
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Failure {
  readonly ok: false
  readonly error: WireError
}

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome<A = unknown> = Success<A> | Failure

/**
 * The code of a call that was interrupted without a tool-specific abort error.
 *
 * @since 0.1.0
 * @category models
 */
export const abortedCode = "TOOL_ABORTED"

/**
 * Whether a value is a typed toolcap error: it carries a stable string `code` (`TOOL_...` for the
 * tools, `CHECKPOINT_...` for the checkpoint) and a message.
 *
 * @since 0.1.0
 * @category models
 */
export const isCodedError = (error: unknown): error is { readonly code: string; readonly message: string } =>
  typeof error === "object" &&
  error !== null &&
  typeof (error as { code?: unknown }).code === "string" &&
  typeof (error as { message?: unknown }).message === "string"

/**
 * Turns a JSON-encodable value into plain JSON data (dropping `undefined`, turning typed arrays into
 * arrays), so every surface serializes the same thing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? "null")

const encodeFields = (error: object): Record<string, unknown> => {
  // A Schema.TaggedError class is its own schema: encode through it so nested schema types
  // (dates, options) reach the wire in their encoded form.
  const schema = error.constructor
  if (Schema.isSchema(schema)) {
    const encoded = Schema.encodeUnknownOption(schema as unknown as Schema.Schema<unknown, unknown>)(error)
    if (Option.isSome(encoded) && typeof encoded.value === "object" && encoded.value !== null) {
      return encoded.value as Record<string, unknown>
    }
  }
  return { ...error }
}

/**
 * A typed tool error as wire JSON.
 *
 * @since 0.1.0
 * @category constructors
 */
export const encodeError = (error: { readonly code: string; readonly message: string }): WireError => {
  const { _tag: _, code: _code, message: _message, stack: _stack, ...fields } = encodeFields(error)
  return toJson({ code: error.code, message: error.message, ...fields }) as WireError
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const succeed = <A>(result: A): Success<A> => ({ ok: true, result })

/**
 * @since 0.1.0
 * @category constructors
 */
export const fail = (error: WireError): Failure => ({ ok: false, error })

/**
 * The wire error of a call interrupted before it could answer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const interrupted = (tool: string): WireError => ({
  code: abortedCode,
  message: `${tool} was aborted before it finished. Run it again if the result is still needed.`
})

/**
 * The outcome of a finished call, for a surface that answers with outcomes: like `fromExit`, but a
 * defect is thrown (squashed), so a bug reaches the caller as the bug it is.
 *
 * @since 0.1.0
 * @category constructors
 */
export const settle = <A, E>(tool: string, exit: Exit.Exit<A, E>): Outcome<A> => {
  const settled = fromExit(tool, exit)
  if (Either.isLeft(settled)) throw Cause.squash(settled.left)
  return settled.right as Outcome<A>
}

/**
 * The outcome of a finished call. A typed error (one with a `code`) becomes a `Failure`; an
 * interruption becomes a `TOOL_ABORTED` failure; anything else (a defect) is returned as `Left`
 * so the surface can report it as the bug it is rather than as a tool error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromExit = <A, E>(
  tool: string,
  exit: Exit.Exit<A, E>
): Either.Either<Outcome, Cause.Cause<E>> => {
  if (Exit.isSuccess(exit)) return Either.right(succeed(toJson(exit.value)))
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && isCodedError(failure.value)) {
    return Either.right(fail(encodeError(failure.value)))
  }
  if (Option.isNone(failure) && Cause.isInterruptedOnly(exit.cause)) {
    return Either.right(fail(interrupted(tool)))
  }
  return Either.left(exit.cause)
}
