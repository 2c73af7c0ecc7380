#!/usr/bin/env bash
# Sets up a fresh machine (Node 20 + npm only): pnpm, dependencies, and a build of every package.
set -euo pipefail
cd "$(dirname "$0")/.."

# better-sqlite3 compiles from source against Node's own headers; pnpm reads this only from the env.
export npm_config_nodedir="${npm_config_nodedir:-/usr}"
export TURBO_TELEMETRY_DISABLED=1

PNPM_VERSION=12.21.0
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  npm i -g "pnpm@$PNPM_VERSION" >&2
fi

# The viewer's end-to-end tests drive Debian's Chromium (playwright-core with executablePath).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then as_root=(); else as_root=(sudo -n); fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get install -y chromium >&2 ||
    { "${as_root[@]}" apt-get update >&2 && "${as_root[@]}" apt-get install -y chromium >&2; }
fi

pnpm install --frozen-lockfile >&2
pnpm run build >&2
