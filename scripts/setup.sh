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

# The context benchmark's cases run pytest, curl, wget, go, cargo (with clippy) and a Docker
# engine (`bench/context/README.md`); its tests run go and cargo for real.
bench_tools=()
pytest --version >/dev/null 2>&1 || bench_tools+=(python3-pytest)
command -v curl >/dev/null 2>&1 || bench_tools+=(curl)
command -v wget >/dev/null 2>&1 || bench_tools+=(wget)
command -v go >/dev/null 2>&1 || bench_tools+=(golang-go)
command -v cargo >/dev/null 2>&1 || bench_tools+=(cargo)
cargo clippy --version >/dev/null 2>&1 || bench_tools+=(rust-clippy)
command -v dockerd >/dev/null 2>&1 || bench_tools+=(docker.io)
if [ "${#bench_tools[@]}" -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then as_root=(); else as_root=(sudo -n); fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get install -y "${bench_tools[@]}" >&2 ||
    { "${as_root[@]}" apt-get update >&2 && "${as_root[@]}" apt-get install -y "${bench_tools[@]}" >&2; } ||
    echo "setup: could not install ${bench_tools[*]}; pnpm bench:context needs them" >&2
fi

# The launcher ships for linux-x64 and linux-arm64: the cross compiler for the other architecture
# (best effort: without it only this machine's architecture is built, and the build says so).
case "$(uname -m)" in
  x86_64) cross=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross); cross_cc=aarch64-linux-gnu-gcc ;;
  aarch64) cross=(gcc-x86-64-linux-gnu libc6-dev-amd64-cross); cross_cc=x86_64-linux-gnu-gcc ;;
  *) cross=(); cross_cc= ;;
esac
if [ -n "$cross_cc" ] && ! command -v "$cross_cc" >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then as_root=(); else as_root=(sudo -n); fi
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y "${cross[@]}" >&2 ||
    echo "setup: no $cross_cc; the launcher is built for $(uname -m) only" >&2
fi

pnpm install --frozen-lockfile >&2
pnpm run build >&2
