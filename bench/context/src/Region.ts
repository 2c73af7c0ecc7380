/**
 * Generated regions of a markdown file: text between `<!-- begin generated: NAME -->` and
 * `<!-- end generated: NAME -->`, so several generators can each own a region of one file and
 * whatever is around them stays as written.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category constructors
 */
export const beginComment = (name: string): string => `<!-- begin generated: ${name} -->`

/**
 * @since 0.1.0
 * @category constructors
 */
export const endComment = (name: string): string => `<!-- end generated: ${name} -->`

/**
 * The document with the region `name` holding `body`: replaced where it exists, appended
 * otherwise. Throws when the region is malformed (a begin without its end, or twice).
 *
 * @since 0.1.0
 * @category constructors
 */
export const replaceRegion = (document: string, name: string, body: string): string => {
  const begin = beginComment(name)
  const end = endComment(name)
  const region = `${begin}\n\n${body.trim()}\n\n${end}`
  const at = document.indexOf(begin)
  if (at < 0) {
    if (document.includes(end)) throw new Error(`${end} without ${begin}`)
    return `${document.trimEnd()}\n\n${region}\n`
  }
  if (document.indexOf(begin, at + begin.length) >= 0) throw new Error(`${begin} appears twice`)
  const endAt = document.indexOf(end, at)
  if (endAt < 0) throw new Error(`${begin} without ${end}`)
  return document.slice(0, at) + region + document.slice(endAt + end.length)
}
