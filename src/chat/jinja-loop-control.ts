/**
 * `{% continue %}` and `{% break %}` with Jinja2's output semantics: the text an iteration wrote before the control
 * statement stays in the loop's output, also when the statement sits inside nested `if` blocks (EXAONE 4 writes its
 * system turn, then `continue`s). `@huggingface/jinja` (0.5.x) throws at the statement and its loop drops everything
 * the iteration's blocks had gathered, so its `evaluateBlock` is replaced (jinja-interpreter.ts) by `runBlock`, which
 * carries the text gathered so far up to the loop body on a `LoopControl`.
 */

import type { JValue } from './jinja-runtime.js';

/** A continue / break on its way up to its loop body, with the text written before it in this iteration. */
class LoopControl extends Error {
  constructor(
    readonly kind: 'Continue' | 'Break',
    public partial: string,
  ) {
    super(`'{% ${kind.toLowerCase()} %}' outside a loop`);
  }
}

/**
 * The text of `statements` (a block), each evaluated by `evalOne` (null and undefined values write nothing). A loop
 * body (`loopBody`) ends at a `continue` with the text so far (the loop goes on) and at a `break` by `onBreak(text)`,
 * which must stop the loop; any other block passes the control on with its text prepended.
 */
export function runBlock(
  statements: readonly { type: string }[],
  evalOne: (s: { type: string }) => JValue,
  loopBody: boolean,
  onBreak: (partial: string) => never,
): string {
  let out = '';
  try {
    for (const s of statements) {
      if (s.type === 'Continue' || s.type === 'Break') throw new LoopControl(s.type, '');
      const v = evalOne(s);
      if (v.type !== 'NullValue' && v.type !== 'UndefinedValue') out += v.toString();
    }
  } catch (e) {
    if (!(e instanceof LoopControl)) throw e;
    e.partial = out + e.partial;
    if (!loopBody) throw e;
    if (e.kind === 'Break') onBreak(e.partial);
    return e.partial;
  }
  return out;
}
