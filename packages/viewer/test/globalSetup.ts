// @ts-expect-error: a plain ESM build script without type declarations
import { buildUi } from "../scripts/build-ui.mjs"

export default async function setup(): Promise<void> {
  await (buildUi as () => Promise<void>)()
}
