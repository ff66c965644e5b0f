// WGSL minifier for production builds (vite.config.ts): drops comments, indentation and blank lines. WGSL has no
// string literals, so `//` and `/*` always open comments (block comments nest); runs of whitespace become one space.

/**
 * `src` without comments and redundant whitespace; line breaks between tokens are kept.
 * @param {string} src
 * @returns {string}
 */
export function minifyWgsl(src) {
  let out = '';
  let depth = 0;
  for (let i = 0; i < src.length; i++) {
    if (src.startsWith('/*', i)) {
      depth++;
      i++;
    } else if (depth > 0) {
      if (src.startsWith('*/', i)) {
        depth--;
        i++;
      } else if (src[i] === '\n') out += '\n';
    } else if (src.startsWith('//', i)) {
      while (i + 1 < src.length && src[i + 1] !== '\n') i++;
    } else {
      out += src[i];
    }
  }
  return (
    out
      .split('\n')
      .map((line) => line.trim().replace(/\s+/g, ' '))
      .filter((line) => line.length > 0)
      .join('\n') + '\n'
  );
}
