/**
 * Budgets of one template render. A chat template is code from the model file: a hostile or broken one must not be
 * able to exhaust memory or hang the engine, so the interpreter (`jinja-interpreter.ts`) enforces these inside the
 * render and stops it with `LlmError('template')` naming the construct.
 */

/** Limits of one render. */
export interface TemplateBudget {
  /** Most elements one `range()` may produce (default 100,000). */
  readonly maxRangeElements?: number;
  /** Most loop iterations in all (default 250,000). */
  readonly maxLoopIterations?: number;
  /** Most characters of rendered output (default 8,000,000). */
  readonly maxOutputChars?: number;
  /** Most characters of any one string value (default 8,000,000). */
  readonly maxStringChars?: number;
  /** Most elements of any one list built by the template (default 1,000,000). */
  readonly maxListElements?: number;
  /** Most evaluation steps (expression and statement nodes) (default 50,000,000). */
  readonly maxSteps?: number;
  /** Wall-clock limit in milliseconds (default 5,000). */
  readonly maxMillis?: number;
}

/** The budget with every default filled in. */
export type ResolvedTemplateBudget = Required<TemplateBudget>;

/** Defaults: far above any real template (the largest of llama.cpp's corpus needs < 1 % of each). */
const DEFAULT_TEMPLATE_BUDGET: ResolvedTemplateBudget = {
  maxRangeElements: 100_000,
  maxLoopIterations: 250_000,
  maxOutputChars: 8_000_000,
  maxStringChars: 8_000_000,
  maxListElements: 1_000_000,
  maxSteps: 50_000_000,
  maxMillis: 5_000,
};

/**
 * The budget of each capability probe (`template-caps.ts`): probes run small fixed conversations, so a template
 * that needs more than this is hostile, and probing stops at its first overrun.
 */
export const PROBE_TEMPLATE_BUDGET: ResolvedTemplateBudget = {
  maxRangeElements: 10_000,
  maxLoopIterations: 100_000,
  maxOutputChars: 1_000_000,
  maxStringChars: 1_000_000,
  maxListElements: 100_000,
  maxSteps: 2_000_000,
  maxMillis: 250,
};

/** Fills in the defaults; rejects non-positive or non-finite limits. */
export function resolveTemplateBudget(b: TemplateBudget | undefined): ResolvedTemplateBudget {
  const out = { ...DEFAULT_TEMPLATE_BUDGET };
  for (const [k, v] of Object.entries(b ?? {})) {
    if (v === undefined) continue;
    if (!(k in out)) throw new TypeError(`unknown template budget '${k}'`);
    if (typeof v !== 'number' || !(v > 0))
      throw new TypeError(`template budget '${k}' must be a positive number, got ${String(v)}`);
    (out as Record<string, number>)[k] = v;
  }
  return out;
}
