// WGSL minifier for production builds (vite.config.ts): drops comments and every space or line break that separates
// nothing. WGSL has no string literals, so `//` and `/*` always open comments (block comments nest). A space stays
// only between two word characters (identifiers, keywords, numbers) and between two symbols that would otherwise
// read as one longer token (`a - -b` must not become `a--b`, `array<f32, 4> = x` must not become `4>=x`).

/** Two-character tokens of WGSL: a space between their halves must survive. */
const FUSING_PAIRS = new Set([
  '--',
  '++',
  '->',
  '>>',
  '<<',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '//',
  '/*',
  '*/',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
]);

const WORD = /[A-Za-z0-9_.]/;

/**
 * `src` without comments and redundant whitespace (see the file header).
 * @param {string} src
 * @returns {string}
 */
export function minifyWgsl(src) {
  let text = '';
  let depth = 0;
  for (let i = 0; i < src.length; i++) {
    if (src.startsWith('/*', i)) {
      depth++;
      i++;
    } else if (depth > 0) {
      if (src.startsWith('*/', i)) {
        depth--;
        i++;
      } else if (src[i] === '\n') text += '\n';
    } else if (src.startsWith('//', i)) {
      while (i + 1 < src.length && src[i + 1] !== '\n') i++;
    } else {
      text += src[i];
    }
  }
  const spaced = text.replace(/\s+/g, ' ').trim();
  let out = '';
  for (let i = 0; i < spaced.length; i++) {
    const c = spaced[i];
    if (c !== ' ') {
      out += c;
      continue;
    }
    const before = out[out.length - 1];
    const after = spaced[i + 1];
    if ((WORD.test(before) && WORD.test(after)) || FUSING_PAIRS.has(before + after)) out += ' ';
  }
  return `${out}\n`;
}
