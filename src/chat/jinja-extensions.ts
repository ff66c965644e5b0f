/**
 * Python/Jinja behaviour that llama.cpp's Jinja engine has and `@huggingface/jinja` 0.5 lacks, used by
 * `jinja-interpreter.ts`: integer dictionary keys kept as integers through `items()` / `dictsort` / iteration,
 * list `append` / `pop` / `extend` / `insert`, `str.format`, the `min` / `max` filters, and Python's `repr` for the
 * `string` filter of lists and mappings (`{'type': 'function', …}`).
 */

import { jinjaRuntime, type JValue } from './jinja-runtime.js';

/** A string value whose JS value is a number came from an integer key: make it an integer again. */
export function fixKey(k: JValue): JValue {
  const rt = jinjaRuntime();
  return k.type === 'StringValue' && typeof k.value === 'number' ? new rt.IntegerValue(k.value) : k;
}

/** Keys lists and (key, value) pair lists from a mapping with integer keys. */
export function fixKeys(v: JValue): JValue {
  if (v.type !== 'ArrayValue') return v;
  const items = v.value as JValue[];
  const rt = jinjaRuntime();
  return new rt.ArrayValue(
    items.map((it) =>
      it.type === 'ArrayValue' && (it.value as JValue[]).length === 2
        ? new rt.ArrayValue([fixKey((it.value as JValue[])[0]), (it.value as JValue[])[1]])
        : fixKey(it),
    ),
  );
}

/** True when a mapping holds a non-string key. */
export function hasNumericKeys(o: JValue): boolean {
  if (o.type !== 'ObjectValue') return false;
  for (const k of (o.value as Map<unknown, unknown>).keys()) if (typeof k !== 'string') return true;
  return false;
}

/** Python's repr of a value, as llama.cpp's `string` filter writes lists and mappings. */
export function pyRepr(v: JValue, depth = 0): string {
  if (depth > 64) return '...';
  switch (v.type) {
    case 'StringValue': {
      const s = String(v.value);
      return s.includes("'") ? JSON.stringify(s) : `'${s}'`;
    }
    case 'IntegerValue':
    case 'FloatValue':
      return String(v.value);
    case 'BooleanValue':
      return v.value ? 'True' : 'False';
    case 'NullValue':
      return 'None';
    case 'UndefinedValue':
      return '';
    case 'ArrayValue':
    case 'TupleValue':
      return `[${(v.value as JValue[]).map((x) => pyRepr(x, depth + 1)).join(', ')}]`;
    case 'ObjectValue':
    case 'KeywordArgumentsValue': {
      const parts: string[] = [];
      for (const [k, x] of v.value as Map<string | number, JValue>) {
        parts.push(`${typeof k === 'number' ? String(k) : pyRepr(jinjaRuntime().convert(k))}: ${pyRepr(x, depth + 1)}`);
      }
      return `{${parts.join(', ')}}`;
    }
    default:
      return v.toString();
  }
}

/** `'{} and {name}'.format(a, name=b)`: positional `{}` / `{0}` and named fields; `{{` / `}}` escape braces. */
export function pyFormat(fmt: string, args: JValue[]): string {
  const positional = args.filter((a) => a.type !== 'KeywordArgumentsValue');
  const kw = args.find((a) => a.type === 'KeywordArgumentsValue');
  let auto = 0;
  const str = (x: JValue | undefined): string =>
    x === undefined
      ? ''
      : x.type === 'StringValue'
        ? String(x.value)
        : x.type === 'ArrayValue' || x.type === 'ObjectValue'
          ? pyRepr(x)
          : x.type === 'BooleanValue'
            ? x.value
              ? 'True'
              : 'False'
            : x.type === 'NullValue'
              ? 'None'
              : x.toString();
  return fmt.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (m, field: string | undefined) => {
    if (m === '{{') return '{';
    if (m === '}}') return '}';
    const name = (field ?? '').split(/[:!]/)[0];
    if (name === '') return str(positional[auto++]);
    if (/^\d+$/.test(name)) return str(positional[Number(name)]);
    if (!kw) throw new Error(`format(): missing argument '${name}'`);
    return str((kw.value as Map<string, JValue>).get(name));
  });
}

/** Methods of lists (mutating, as in Python), or undefined when `name` is not one. `checkSize(n)` throws when a
 * list of `n` elements is over the budget. */
export function listMethod(list: JValue, name: string, checkSize: (n: number) => void): JValue | undefined {
  const rt = jinjaRuntime();
  const arr = list.value as JValue[];
  const fn = (f: (args: JValue[]) => JValue): JValue => new rt.FunctionValue(f);
  switch (name) {
    case 'append':
      return fn(([x]) => {
        checkSize(arr.length + 1);
        arr.push(x ?? new rt.NullValue());
        return new rt.NullValue();
      });
    case 'extend':
      return fn(([x]) => {
        if (x?.type === 'ArrayValue') {
          const add = x.value as JValue[];
          checkSize(arr.length + add.length);
          for (const item of [...add]) arr.push(item);
        }
        return new rt.NullValue();
      });
    case 'insert':
      return fn(([i, x]) => {
        checkSize(arr.length + 1);
        arr.splice(Number(i?.value ?? 0), 0, x ?? new rt.NullValue());
        return new rt.NullValue();
      });
    case 'pop':
      return fn(([i]) => {
        if (arr.length === 0) throw new Error('pop from empty list');
        const idx =
          i === undefined ? arr.length - 1 : Number(i.value) < 0 ? arr.length + Number(i.value) : Number(i.value);
        if (idx < 0 || idx >= arr.length) throw new Error('pop index out of range');
        return arr.splice(idx, 1)[0];
      });
    default:
      return undefined;
  }
}

/** `min` / `max` filters over a list of numbers or strings. */
export function minMax(list: JValue, which: 'min' | 'max'): JValue {
  const arr = list.value as JValue[];
  if (arr.length === 0) return new (jinjaRuntime().UndefinedValue)();
  let best = arr[0];
  for (const x of arr.slice(1)) {
    const less = (x.value as number | string) < (best.value as number | string);
    if (which === 'min' ? less : !less && x.value !== best.value) best = x;
  }
  return best;
}

const guarded = new WeakSet<object>();

/**
 * Sizes `str.replace(old, new[, count])` before it runs (the library builds the result at once: a doubling replace
 * would otherwise exhaust memory before any budget check sees the value). Patches the value's own builtin map once.
 */
export function guardStringBuiltins(v: JValue, checkSize: (n: number) => void): void {
  if (v.type !== 'StringValue' || guarded.has(v)) return;
  guarded.add(v);
  const map = v.builtins;
  const original = map.get('replace');
  if (!original) return;
  const rt = jinjaRuntime();
  map.set(
    'replace',
    new rt.FunctionValue((args: JValue[], scope: unknown) => {
      const [oldV, newV] = args;
      if (oldV?.type === 'StringValue' && newV?.type === 'StringValue') {
        const str = String(v.value);
        const from = String(oldV.value);
        const to = String(newV.value);
        const countArg =
          args[2]?.type === 'KeywordArgumentsValue' ? (args[2].value as Map<string, JValue>).get('count') : args[2];
        const limit =
          countArg?.type === 'IntegerValue' && Number(countArg.value) >= 0 ? Number(countArg.value) : Infinity;
        let n = 0;
        if (from === '') n = Math.min(limit, str.length + 1);
        else for (let i = str.indexOf(from); i >= 0 && n < limit; i = str.indexOf(from, i + from.length)) n++;
        checkSize(str.length + n * (to.length - from.length));
      }
      return (original.value as (a: JValue[], s: unknown) => JValue)(args, scope);
    }),
  );
}

const ASCII_SPACE = ' \t\n\v\f\r';

/** `str.strip([chars])` as llama.cpp: without `chars` only ASCII whitespace (C `isspace`), else any of `chars`. */
export function pyStrip(str: string, left: boolean, right: boolean, chars?: string): string {
  const set = chars ?? ASCII_SPACE;
  let a = 0;
  let b = str.length;
  if (left) while (a < b && set.includes(str[a])) a++;
  if (right) while (b > a && set.includes(str[b - 1])) b--;
  return str.slice(a, b);
}
