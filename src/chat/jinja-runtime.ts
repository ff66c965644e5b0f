/**
 * The runtime value classes of `@huggingface/jinja` (0.5.x), which the package does not export: found once by
 * converting sample values through an `Environment`, so this module can build and test values the way the library's
 * own interpreter does. Only the members used here are typed.
 */

import { Environment } from '@huggingface/jinja';

/** A runtime value of the interpreter (the fields this module reads). */
export interface JValue {
  readonly type: string;
  // biome-ignore lint/suspicious/noExplicitAny: @huggingface/jinja AST and runtime values are untyped
  value: any;
  builtins: Map<string, JValue>;
  __bool__(): { value: boolean };
  toString(): string;
}

/** Constructor of a runtime value class. */
type JValueClass = new (value?: unknown) => JValue;

/** The interpreter's value classes. */
export interface JRuntime {
  readonly StringValue: JValueClass;
  readonly IntegerValue: JValueClass;
  readonly FloatValue: JValueClass;
  readonly BooleanValue: JValueClass;
  readonly ArrayValue: JValueClass;
  readonly ObjectValue: JValueClass;
  readonly NullValue: JValueClass;
  readonly UndefinedValue: JValueClass;
  readonly FunctionValue: JValueClass;
  /** JS value → runtime value, as `Environment.set` converts it. */
  convert(v: unknown): JValue;
}

let cached: JRuntime | undefined;

/** The value classes (discovered on first use). */
export function jinjaRuntime(): JRuntime {
  if (cached) return cached;
  const env = new Environment();
  const samples: Record<string, unknown> = { s: 'x', i: 1, f: 1.5, b: true, a: [], o: { k: 1 }, n: null, fn: () => 0 };
  for (const [k, v] of Object.entries(samples)) env.set(k, v);
  const ctor = (k: string): JValueClass => (env.lookupVariable(k) as unknown as JValue).constructor as JValueClass;
  const convert = (v: unknown): JValue => {
    const e = new Environment();
    e.set('v', v);
    return e.lookupVariable('v') as unknown as JValue;
  };
  cached = {
    StringValue: ctor('s'),
    IntegerValue: ctor('i'),
    FloatValue: ctor('f'),
    BooleanValue: ctor('b'),
    ArrayValue: ctor('a'),
    ObjectValue: ctor('o'),
    NullValue: ctor('n'),
    UndefinedValue: ctor('missing'),
    FunctionValue: ctor('fn'),
    convert,
  };
  return cached;
}

/** True for the interpreter's `undefined` / `none`. */
export function isNullish(v: JValue): boolean {
  return v.type === 'UndefinedValue' || v.type === 'NullValue';
}
