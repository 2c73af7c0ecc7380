// `pnpm --silent toolcap ...` from anywhere in the repository: pnpm runs scripts in the root, so
// go back to the directory pnpm was called from (INIT_CWD) before running the CLI, which then
// resolves its default workspace and relative paths against the caller's directory.
import process from "node:process"

if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD)
await import(new URL("../apps/demo/dist/bin.js", import.meta.url).href)
