/** A tiny element builder: text children are text nodes, so nothing from a tool is parsed as HTML. */
export type Child = Node | string | null | undefined | false

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: ReadonlyArray<Child | ReadonlyArray<Child>>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(props)) {
    if (value !== undefined) element.setAttribute(name, value)
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    element.append(child)
  }
  return element
}

export const json = async <A>(url: string): Promise<{ status: number; body: A }> => {
  const response = await fetch(url, { credentials: "same-origin" })
  return { status: response.status, body: (await response.json()) as A }
}

export const formatCount = (value: number): string => value.toLocaleString("en-US")
