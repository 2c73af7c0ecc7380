/**
 * The lifeline: one small watchdog process per host that outlives the host and stops what the
 * host left running. The host holds the write end of the watchdog's stdin and tells it, one line
 * per event, what is live (a call's cgroup, a call's process group and cookie, a single child's
 * pid) and when it ended. When the host dies in any way (SIGKILL included) the kernel closes that
 * pipe; the watchdog reads end of file and stops everything still registered. Nothing has to run
 * in the dying host.
 *
 * The watchdog is `/bin/sh` running the script below (no Node start-up, ~1 MB of memory), in a
 * session of its own so signals to the host's terminal group do not reach it, and outside every
 * call's cgroup; where calls run under Landlock scopes none can signal it. Where they do not, a
 * watchdog that is killed is started again at once with everything registered. It exits after the
 * sweep, so a host that ended normally (nothing registered) leaves nothing behind. Each supervisor
 * layer has its own, started on its first registration; closing the layer closes its stdin.
 */
import type { ChildProcess } from "node:child_process"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawnChild } from "./process.js"

/**
 * Lines: `+<id> cg <dir>`, `+<id> cgs <parent> <prefix>` (every cgroup `<parent>/<prefix>*`: all
 * call cgroups of this host, registered once), `+<id> pg <pgid> <cookie>` (pgid `-` while not yet
 * known), `+<id> pid <pid>`, `+<id> dl <seconds> <grace seconds> <report file> <cookie> <cg or pg entry>`
 * (a deadline: that entry is stopped after `seconds` unless `-<id>` comes first, the pids signalled
 * appended to the report file as `T <pid>` and `K <pid>`; in a cgroup only the members carrying
 * the cookie or descending from one that does), `-<id>`. The live set is
 * one shell variable of "@<id> <kind> <a> <b>" lines, edited with parameter expansion only (no
 * process per event). At end of file: SIGTERM to everything, a short grace, then `cgroup.kill`
 * / SIGKILL, repeated a few times to catch forks in flight, and the cgroups removed.
 */
const SCRIPT = `
live=''
timers=''
# the cgroups below a call's too (the command may have made them and moved there), hidden ones included
below() { for c in "$1"/*/ "$1"/.[!.]*/ "$1"/..?*/; do [ -d "$c" ] && echo "\${c%/}" && below "\${c%/}"; done; }
cgstop() {
  if [ "$1" = TERM ]; then
    for p in $(cat "$2/cgroup.procs" $(below "$2" | sed 's|$|/cgroup.procs|') 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
  else echo 1 > "$2/cgroup.kill" 2>/dev/null; fi
}
stop() {
  printf '%s' "$live" | while read -r id kind a b; do
    case "$kind" in
      cg) cgstop "$1" "$a" ;;
      cgs) for d in "$a/$b"*; do [ -d "$d" ] && cgstop "$1" "$d"; done ;;
      pg) [ "$a" = - ] || kill -"$1" "-$a" 2>/dev/null
          for f in $(grep -lzx "TOOLCAP_RUN_ID=$b" /proc/[0-9]*/environ 2>/dev/null); do
            p="\${f#/proc/}"; kill -"$1" "\${p%/environ}" 2>/dev/null
          done ;;
      pid) kill -"$1" "$a" 2>/dev/null ;;
    esac
  done
}
# the call's own among some pids, by its cookie (the host's stop decides by membership.ts): a process
# carrying it, or descending through living parents from one that does. One moved in from outside
# (the host itself, say) is not signalled: the host's own stop, when its loop turns, sees to it
own() {
  c=$1; shift
  marked=" $(grep -lzx "TOOLCAP_RUN_ID=$c" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/||; s|/environ$||' | tr '\n' ' ') "
  for p in "$@"; do
    q=$p; hops=0
    while [ "$hops" -lt 64 ]; do
      case "$marked" in *" $q "*) echo "$p"; break ;; esac
      st=''; read -r st < "/proc/$q/stat" 2>/dev/null || break
      st="\${st##*) }"; st="\${st#* }"; q="\${st%% *}"; hops=$((hops + 1))
      [ "$q" -gt 1 ] 2>/dev/null || break
    done
  done
}
# a deadline's signal to one entry, each pid recorded as "<letter> <pid>" in the report file (the
# host reads it). A cgroup is thawed first (a frozen process cannot act on SIGTERM) and only its own
# members are signalled; cgroup.kill (atomic, forks in flight included) only when all are its own
dlstop() {
  sig=$1 tag=$2 report=$3 c=$4 kind=$5 a=$6 b=$7
  case "$kind" in
    cg) for d in "$a" $(below "$a"); do echo 0 > "$d/cgroup.freeze"; done 2>/dev/null
        all=$(cat "$a/cgroup.procs" $(below "$a" | sed 's|$|/cgroup.procs|') 2>/dev/null)
        mine=$(own "$c" $all)
        for p in $mine; do echo "$tag $p"; done >> "$report"
        if [ "$sig" = KILL ] && [ "$(echo $all)" = "$(echo $mine)" ]; then echo 1 > "$a/cgroup.kill" 2>/dev/null
        else for p in $mine; do kill -"$sig" "$p" 2>/dev/null; done; fi ;;
    pg) for f in /proc/[0-9]*/stat; do
          st=''; read -r st < "$f" 2>/dev/null; st="\${st##*) }"; set -- $st
          [ "$3" = "$a" ] && p="\${f#/proc/}" && echo "$tag \${p%/stat}"
        done >> "$report"
        for f in $(grep -lzx "TOOLCAP_RUN_ID=$b" /proc/[0-9]*/environ 2>/dev/null); do
          p="\${f#/proc/}"; echo "$tag \${p%/environ}"
        done >> "$report"
        live="@deadline pg $a $b
"; stop "$sig" ;;
  esac
}
# the stop of one entry, for a deadline: SIGTERM, the grace, SIGKILL (a subshell of its own, killed
# when the host begins its own stop or ends the call first; its sleeps are killed with it)
arm() {
  (
    trap 'kill $s 2>/dev/null; exit 0' TERM
    sleep "$2" & s=$!; wait $s
    dlstop TERM T "$4" "$5" "$6" "$7" "$8"
    sleep "$3" & s=$!; wait $s
    dlstop KILL K "$4" "$5" "$6" "$7" "$8"
  ) </dev/null &
  timers="$timers@$1 $! $4
"
}
# a timer's subshell, killed only while it is still this shell's child (a reused pid is not)
disarm() {
  case "$timers" in
    *"@$1 "*) t="\${timers#*"@$1 "}"; t="\${t%%
*}"; head="\${timers%%"@$1 "*}"; tail="\${timers#*"@$1 "}"; tail="\${tail#*
}"; timers="$head$tail"
      set -- "\${t%% *}" "\${t#* }"
      st=''; read -r st < "/proc/$1/stat" 2>/dev/null; st="\${st##*) }"; set -- "$1" "$2" $st
      [ "$4" = "$$" ] && kill "$1" 2>/dev/null
      [ -n "$2" ] && [ -n "$gone" ] && rm -f "$2" ;;
  esac
}
while IFS= read -r line; do
  case "$line" in
    +*" dl "*) set -f; set -- \${line#+}; set +f; arm "$1" "$3" "$4" "$5" "$6" "$7" "$8" "$9" ;;
    +*) live="$live@\${line#+}
" ;;
    -*) id="\${line#-}"
        disarm "$id"
        case "$live" in
          *"@$id "*) head="\${live%%"@$id "*}"; tail="\${live#*"@$id "}"; tail="\${tail#*
}"; live="$head$tail" ;;
        esac ;;
  esac
done
# the deadlines still armed: the stop below covers their trees, and nobody reads their reports
gone=1
while [ -n "$timers" ]; do t="\${timers#@}"; disarm "\${t%% *}"; done
# a host-wide rule that matches no cgroup now has nothing to stop, but the parent the host kept
# for its next call may be left: removed when empty (the kernel refuses while a cgroup is in it,
# and a host that finds it gone makes it again)
rules=$live
live=''
while IFS= read -r line; do
  case "$line" in
    *" cgs "*) set -- $line; kept=''
      for d in "$3/$4"*; do [ -d "$d" ] && live="$live$line
" && kept=1 && break; done
      [ -n "$kept" ] || rmdir "$3" 2>/dev/null ;;
    ?*) live="$live$line
" ;;
  esac
done <<RULES
$rules
RULES
[ -n "$live" ] || exit 0
stop TERM
sleep 0.3
for round in 1 2 3 4 5; do stop KILL; sleep 0.1; done
printf '%s' "$live" | while read -r id kind a b; do
  case "$kind" in
    cg) dirs=$a ;;
    cgs) dirs=$(for d in "$a/$b"*; do [ -d "$d" ] && echo "$d"; done) ;;
    *) continue ;;
  esac
  for d in $dirs; do
    for round in 1 2 3 4 5 6 7 8 9 10; do
      below "$d" | sort -r | while IFS= read -r c; do rmdir "$c" 2>/dev/null; done
      rmdir "$d" 2>/dev/null && break; sleep 0.1
    done
    rmdir "\${d%/*}" 2>/dev/null
  done
done
`

/**
 * What the watchdog must stop if the host dies: a cgroup directory, every cgroup of a prefix, a
 * process group with its cookie, or one process.
 *
 * @internal
 */
export type Lifeline =
  | { readonly kind: "cg"; readonly dir: string }
  | { readonly kind: "cgs"; readonly parent: string; readonly prefix: string }
  | { readonly kind: "pg"; readonly pgid: number | undefined; readonly cookie: string }
  | { readonly kind: "pid"; readonly pid: number }

/** A deadline line (see `Watchdog.arm`): registered like the others, stopped by its own timer. */
type Registration = Lifeline | { readonly kind: "dl"; readonly line: string }

const describe = (what: Registration): string =>
  what.kind === "dl"
    ? what.line
    : what.kind === "cg"
      ? `cg ${what.dir}`
      : what.kind === "cgs"
        ? `cgs ${what.parent} ${what.prefix}`
        : what.kind === "pg"
          ? `pg ${what.pgid ?? "-"} ${what.cookie}`
          : `pid ${what.pid}`

/** A path with whitespace cannot be told apart on a line. */
const unlisted = (what: Registration): boolean =>
  /\s/.test(what.kind === "cg" ? what.dir : what.kind === "cgs" ? what.parent + what.prefix : "")

/** Milliseconds as the seconds of a deadline line (`sleep` takes fractions). */
const seconds = (ms: number): string => (Math.max(0, ms) / 1000).toFixed(3)

/** One host's (one layer's) watchdog. @internal */
export interface Watchdog {
  /**
   * Registers something live (the watchdog starts on first use); the returned function
   * unregisters it (idempotent). Paths with whitespace cannot be told apart on a line and are not
   * registered (the startup sweep still finds them).
   */
  readonly register: (what: Lifeline) => () => void
  /**
   * Arms a deadline: unless the returned function (idempotent) is called first, the watchdog sends
   * `what` SIGTERM `afterMs` from now and SIGKILL `graceMs` after that, whatever the host's event
   * loop does meanwhile, appending `T <pid>` and `K <pid>` lines for what it signalled to the file
   * `report`. In a cgroup it signals only the members carrying `cookie` (the call's run id) or
   * descending from one that does: a process moved in from outside is left to the host's stop,
   * which decides by membership. False when no watchdog runs to keep it.
   */
  readonly arm: (
    what: Lifeline,
    afterMs: number,
    graceMs: number,
    report: string,
    cookie: string
  ) => { readonly armed: boolean; readonly disarm: () => void }
  /** Registers something for the watchdog's whole life, once however often it is asked. */
  readonly registerStanding: (what: Lifeline) => void
  /** The watchdog's pid; undefined before the first registration. */
  readonly pid: () => number | undefined
  /** Closes the watchdog's stdin: it stops what is still registered and exits. */
  readonly dismiss: () => ChildProcess | undefined
}

/**
 * A watchdog not started yet, outside any scope (`make` ties one to a scope).
 *
 * @internal
 */
export const makeUnsafe = (): Watchdog => {
  let watchdog: ChildProcess | undefined
  let dismissed = false
  // what is registered now, re-sent to a new watchdog if the old one died
  const registered = new Map<string, string>()
  const standing = new Set<string>()
  let nextId = 0
  const start = (): void => {
    let child: ChildProcess
    try {
      child = spawnChild("/bin/sh", ["-c", SCRIPT], { stdio: ["pipe", "ignore", "ignore"], detached: true })
    } catch {
      return
    }
    // the host must be able to exit while the watchdog waits: neither the process nor the pipe
    // keeps the event loop alive
    child.unref()
    const stdin = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null
    stdin?.unref?.()
    stdin?.on("error", () => {})
    child.on("error", () => {})
    // killed (a call without Landlock scopes can reach it): a new one takes over what is registered
    child.once("exit", (_code, signal) => {
      if (!dismissed && signal !== null && watchdog === child && registered.size > 0) start()
    })
    watchdog = child
    for (const [id, what] of registered) stdin?.write(`+${id} ${what}\n`)
  }
  const send = (line: string): void => {
    if (dismissed) return
    if (watchdog === undefined || watchdog.exitCode !== null || watchdog.signalCode !== null) {
      // a new watchdog is sent everything registered, this line included (sent twice, one copy
      // would outlive its removal)
      if (!line.startsWith("-")) start()
      return
    }
    watchdog.stdin?.write(`${line}\n`)
  }
  const register = (what: Registration): (() => void) => {
    if (unlisted(what)) return () => {}
    const line = describe(what)
    const id = (nextId++).toString(36)
    registered.set(id, line)
    send(`+${id} ${line}`)
    return () => {
      if (!registered.delete(id)) return
      send(`-${id}`)
    }
  }
  return {
    register,
    arm: (what, afterMs, graceMs, report, cookie) => {
      if (unlisted(what) || /\s/.test(report + cookie) || cookie === "")
        return { armed: false, disarm: () => {} }
      const target = describe(what)
      const disarm = register({
        kind: "dl",
        line: `dl ${seconds(afterMs)} ${seconds(graceMs)} ${report} ${cookie} ${target}`
      })
      const armed = watchdog !== undefined && watchdog.exitCode === null && watchdog.signalCode === null
      return { armed, disarm }
    },
    registerStanding: (what) => {
      const line = describe(what)
      if (standing.has(line)) return
      standing.add(line)
      register(what)
    },
    pid: () => watchdog?.pid,
    dismiss: () => {
      dismissed = true
      watchdog?.stdin?.destroy()
      return watchdog
    }
  }
}

/**
 * How long closing a layer waits for its watchdog to exit: at once when nothing is registered,
 * about a second when it still had something to stop (see the script's rounds).
 */
const EXIT_WAIT_MS = 3000

/**
 * A watchdog for the current scope: closing the scope closes its stdin and waits (bounded) for it
 * to exit, so a closed layer leaves no watchdog behind.
 *
 * @internal
 */
export const make: Effect.Effect<Watchdog, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(makeUnsafe),
  (watchdog) =>
    Effect.suspend(() => {
      const child = watchdog.dismiss()
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Effect.void
      return Effect.async<void>((resume) => {
        const done = () => resume(Effect.void)
        child.once("exit", done)
        return Effect.sync(() => child.off("exit", done))
      }).pipe(Effect.timeoutOption(Duration.millis(EXIT_WAIT_MS)), Effect.asVoid)
    })
)
