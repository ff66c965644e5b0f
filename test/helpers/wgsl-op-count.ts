/**
 * Static operation count of WGSL functions, for the instruction-per-weight checks of the hardware GEMV (issue 23):
 * a function's body is tokenised and every operation counted once — a binary or unary operator, a comparison, a
 * compound assignment, a builtin call, a storage read (`weights[…]`, `x[…]`, …) — with calls to functions of the same
 * source inlined (their counts added per call) and `for` loops with constant bounds multiplied by their trip count.
 * Vector operations count once (WGSL operations, not scalar ALU instructions): the figures compare kernels with each
 * other and with themselves over time, they are not cycle counts. Type constructors and conversions count nothing.
 */

/** Storage buffers whose reads count as loads. */
const LOADS = new Set(['weights', 'x', 'norm_w', 'bias', 'tile_w', 'tile_x', 'k_cache', 'v_cache']);
const OPERATORS = [
  '<<=',
  '>>=',
  '+=',
  '-=',
  '*=',
  '/=',
  '&=',
  '|=',
  '^=',
  '<<',
  '>>',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
];
const SINGLE = new Set(['+', '-', '*', '/', '%', '&', '|', '^', '<', '>', '!', '~']);
const CONSTRUCTORS = /^(vec[234]|mat\d x\d|array|f32|f16|u32|i32|bool|bitcast)$/;

/** The functions of a WGSL source: name → body text (between the outer braces). */
function wgslFunctions(src: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of src.matchAll(/\bfn\s+(\w+)\s*\(/g)) {
    const open = src.indexOf('{', m.index);
    let depth = 0;
    for (let i = open; i < src.length; i++) {
      if (src[i] === '{') depth++;
      else if (src[i] === '}' && --depth === 0) {
        out.set(m[1]!, src.slice(open + 1, i));
        break;
      }
    }
  }
  return out;
}

function tokens(body: string): string[] {
  const src = body.replace(/\/\/[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
  const out: string[] = [];
  const re =
    /\s*([A-Za-z_]\w*|0x[0-9a-fA-F]+[ui]?|\d+\.?\d*(?:e[+-]?\d+)?[uif]?|<<=|>>=|[+\-*/&|^]=|<<|>>|==|!=|<=|>=|&&|\|\||\+\+|--|->|\S)/y;
  for (let m = re.exec(src); m; m = re.exec(src)) out.push(m[1]!);
  return out;
}

/** Index of the token closing the bracket opened at `open`. */
function closing(t: readonly string[], open: number): number {
  const pair: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const want = pair[t[open]!]!;
  let depth = 0;
  for (let i = open; i < t.length; i++) {
    if (t[i] === t[open]) depth++;
    else if (t[i] === want && --depth === 0) return i;
  }
  throw new Error(`unbalanced ${t[open]}`);
}

/** Operations of `fnName` in `src` per call (see the file header); `what: 'loads'` counts only the storage reads. */
export function countOps(src: string, fnName: string, what: 'all' | 'loads' = 'all'): number {
  const all = what === 'all';
  const fns = wgslFunctions(src);
  const memo = new Map<string, number>();
  const ofFunction = (name: string): number => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const body = fns.get(name);
    if (body === undefined) throw new Error(`no function ${name}`);
    memo.set(name, 0); // recursion is not WGSL, but stay finite
    const n = ofTokens(tokens(body));
    memo.set(name, n);
    return n;
  };
  const ofTokens = (t: readonly string[]): number => {
    let n = 0;
    for (let i = 0; i < t.length; i++) {
      const tok = t[i]!;
      if (tok === 'for') {
        // for (var v = A; v < B; v++) { … } with literal A and B: the body times (B − A); else once.
        const head = t.slice(i + 2, closing(t, i + 1));
        const bodyOpen = closing(t, i + 1) + 1;
        const bodyEnd = closing(t, bodyOpen);
        const a = Number.parseInt(head[3] ?? '', 10);
        const b = Number.parseInt(head[7] ?? '', 10);
        const trips = head[6] === '<' && Number.isFinite(a) && Number.isFinite(b) ? b - a : 1;
        n += trips * ofTokens(t.slice(bodyOpen + 1, bodyEnd));
        i = bodyEnd;
      } else if (/^[A-Za-z_]\w*$/.test(tok) && t[i + 1] === '(') {
        if (fns.has(tok)) n += ofFunction(tok);
        else if (all && !CONSTRUCTORS.test(tok) && tok !== 'return') n += 1;
      } else if (/^[A-Za-z_]\w*$/.test(tok) && t[i + 1] === '<' && CONSTRUCTORS.test(tok)) {
        // vec4<f32>(…): skip the template arguments
        let depth = 0;
        for (i++; i < t.length; i++) {
          if (t[i] === '<') depth++;
          else if (t[i] === '>' && --depth === 0) break;
          else if (t[i] === '>>' && (depth -= 2) <= 0) break;
        }
      } else if (LOADS.has(tok) && t[i + 1] === '[') {
        n += 1;
      } else if (all && (OPERATORS.includes(tok) || SINGLE.has(tok))) {
        n += 1;
      }
    }
    return n;
  };
  return ofFunction(fnName);
}
