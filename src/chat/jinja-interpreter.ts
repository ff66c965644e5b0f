/**
 * The chat-template interpreter: `@huggingface/jinja`'s `Interpreter`, extended (a subclass, no patch of the package)
 * so that it
 * - renders the constructs llama.cpp's Jinja engine (`common/jinja`) accepts and the library rejects: integer
 *   dictionary keys, filters on `undefined` / `none` (`length`, `selectattr`, `items`, … give empty values), `for`
 *   over an undefined value (no iterations), `+` / `~` between a string and `none` / undefined (concatenation with
 *   ''), string methods the library lacks;
 * - enforces a `TemplateBudget` inside the render (elements of `range()`, loop iterations, list and string sizes,
 *   output length, evaluation steps, wall time, the caller's `AbortSignal`), so a hostile template ends with
 *   `LlmError('template')` naming the construct and its line instead of exhausting memory or hanging;
 * - optionally records which input values a render used (llama.cpp's capability probes, `template-caps.ts`).
 *
 * The library keeps most evaluation methods `private` in its typings; they are ordinary prototype methods at run
 * time, reached here through one cast. The pinned version (package.json) is what the tests cover.
 */

import { type Environment, Interpreter } from '@huggingface/jinja';
import { LlmError } from '../errors.js';
import {
  fixKey,
  fixKeys,
  guardStringBuiltins,
  hasNumericKeys,
  listMethod,
  minMax,
  pyFormat,
  pyRepr,
  pyStrip,
} from './jinja-extensions.js';
import { runBlock } from './jinja-loop-control.js';
import { isNullish, jinjaRuntime, type JValue } from './jinja-runtime.js';
import type { ResolvedTemplateBudget } from './template-budget.js';
import { COERCED_TO_STRING, NONE_FILTERS, UNDEFINED_FILTERS } from './jinja-filter-defaults.js';
import { describeStatement } from './template-node-text.js';

type Program = Parameters<Interpreter['run']>[0];
/** An AST node (the fields read here). */
// biome-ignore lint/suspicious/noExplicitAny: @huggingface/jinja AST and runtime values are untyped
type Node = { type: string } & Record<string, any>;

/** Where statement-level nodes are in the template source (1-based lines). */
export type NodeLines = WeakMap<object, number>;

/** Thrown by `raise_exception` in a template. */
export class TemplateRaise extends Error {}

/** A budget overrun (becomes `LlmError('template')`). */
export class TemplateBudgetError extends Error {}

// The private evaluation methods of the base class, called on `this`.
type Base = Record<string, (this: unknown, ...args: unknown[]) => JValue>;
const base = Interpreter.prototype as unknown as Base;

/** Options of one render. */
export interface ChatInterpreterOptions {
  readonly budget: ResolvedTemplateBudget;
  readonly signal?: AbortSignal;
  readonly lines?: NodeLines;
  /** Record the values the render touches (for capability probes). */
  readonly trackUsage?: boolean;
}

/** See the module comment. */
export class ChatInterpreter extends Interpreter {
  /** Values the render touched (only with `trackUsage`). */
  readonly used = new WeakSet<object>();
  /** Operations applied to values (filter / test names, 'array_access'), with `trackUsage`. */
  readonly ops = new WeakMap<object, Set<string>>();
  private readonly opts: ChatInterpreterOptions;
  private readonly deadline: number;
  private steps = 0;
  // Not private: the prototype hooks below (evaluateFor/evaluateBlock, applyFilter) use these three.
  /** @internal */ iterations = 0;
  /** @internal */ readonly forBodies = new Map<unknown, Node>();
  /** @internal The text written before a `break`, appended to its loop's output (jinja-loop-control.ts). */
  breakTail: string | null = null;
  private readonly forIterables = new Set<unknown>();
  private readonly stack: Node[] = [];

  constructor(env: Environment, opts: ChatInterpreterOptions) {
    super(env);
    this.opts = opts;
    this.deadline = Date.now() + opts.budget.maxMillis;
  }

  /** Runs the program; budget overruns and engine errors become `LlmError('template')`. */
  override run(program: Program): ReturnType<Interpreter['run']> {
    if (this.opts.signal?.aborted)
      throw new LlmError('aborted', 'rendering the chat template was aborted', { cause: this.opts.signal.reason });
    try {
      return super.run(program);
    } catch (e) {
      throw this.toLlmError(e);
    }
  }

  /** The statement-level construct being evaluated, and its line. */
  where(): { construct?: string; line?: number } {
    for (let i = this.stack.length - 1; i >= 0; i--) {
      const line = this.opts.lines?.get(this.stack[i]);
      if (line !== undefined) return { construct: describeStatement(this.stack[i]), line };
    }
    return {};
  }

  private toLlmError(e: unknown): Error {
    if (e instanceof LlmError) return e;
    const loc =
      typeof e === 'object' && e !== null
        ? ((e as Record<symbol, unknown>)[LOCATION] as { construct?: string; line?: number } | undefined)
        : undefined;
    const { construct, line } = loc ?? this.where();
    const at = construct ? ` in '${construct}'${line !== undefined ? ` (line ${line})` : ''}` : '';
    const details = { ...(construct ? { construct } : {}), ...(line !== undefined ? { line } : {}) };
    if (e instanceof TemplateRaise) {
      return new LlmError('template', `the chat template refused the conversation: ${e.message}`, {
        cause: e,
        details,
      });
    }
    if (e instanceof TemplateBudgetError) {
      return new LlmError('template', `the chat template exceeded its budget${at}: ${e.message}`, {
        cause: e,
        details,
      });
    }
    const msg =
      e instanceof RangeError ? `${e.message} (a value grew too large)` : ((e as Error)?.message ?? String(e));
    return new LlmError('template', `rendering the chat template failed${at}: ${msg}`, { cause: e, details });
  }

  private over(what: string): never {
    throw new TemplateBudgetError(what);
  }

  /** Checks a list about to be created (range, literals). */
  checkList(n: number, what: string): void {
    if (n > this.opts.budget.maxListElements)
      this.over(`${what} would hold ${n} elements (limit ${this.opts.budget.maxListElements})`);
  }

  /** Throws when a string of `n` characters is over the budget. */
  checkString(n: number): void {
    if (n > this.opts.budget.maxStringChars)
      this.over(`a string of ${n} characters (limit ${this.opts.budget.maxStringChars})`);
  }

  /** `range()` with the budget applied before anything is allocated. */
  range(start: number, stop?: number, step = 1): number[] {
    if (stop === undefined) [start, stop] = [0, start];
    for (const v of [start, stop, step])
      if (!Number.isInteger(v)) throw new Error(`range() arguments must be integers, got ${v}`);
    if (step === 0) throw new Error('range() step must not be zero');
    const n = Math.max(0, Math.ceil((stop - start) / step));
    if (n > this.opts.budget.maxRangeElements) {
      this.over(
        `range(${start}, ${stop}, ${step}) would produce ${n} elements (limit ${this.opts.budget.maxRangeElements})`,
      );
    }
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = start + i * step;
    return out;
  }

  private tick(node: Node): void {
    if (++this.steps > this.opts.budget.maxSteps) this.over(`more than ${this.opts.budget.maxSteps} evaluation steps`);
    if ((this.steps & 1023) === 0) {
      if (Date.now() > this.deadline) this.over(`rendering took longer than ${this.opts.budget.maxMillis} ms`);
      if (this.opts.signal?.aborted) {
        throw new LlmError('aborted', 'rendering the chat template was aborted', { cause: this.opts.signal.reason });
      }
    }
    void node;
  }

  private mark(v: JValue | undefined, op?: string): void {
    if (!this.opts.trackUsage || v === undefined || typeof v !== 'object') return;
    this.used.add(v);
    if (op) {
      let s = this.ops.get(v);
      if (!s) this.ops.set(v, (s = new Set()));
      s.add(op);
    }
  }

  /** Marks a value and everything inside it as used (`tojson`, `string`). */
  /** @internal (used by the filter hook below) */
  markDeep(v: JValue, depth = 0): void {
    if (!this.opts.trackUsage || depth > 64) return;
    this.mark(v);
    if (v.type === 'ArrayValue' || v.type === 'TupleValue')
      for (const x of v.value as JValue[]) this.markDeep(x, depth + 1);
    else if (v.type === 'ObjectValue')
      for (const x of (v.value as Map<string, JValue>).values()) this.markDeep(x, depth + 1);
  }

  override evaluate(
    statement: Parameters<Interpreter['evaluate']>[0],
    environment: Environment,
  ): ReturnType<Interpreter['evaluate']> {
    const node = statement as unknown as Node | undefined;
    if (!node) return super.evaluate(statement, environment);
    this.tick(node);
    const rt = jinjaRuntime();
    const tracked = this.opts.lines?.has(node) === true;
    if (tracked) this.stack.push(node);
    try {
      let result: JValue;
      switch (node.type) {
        case 'Precomputed':
          return node.value;
        case 'ObjectLiteral': {
          // llama.cpp accepts any scalar key ({0: 'a'}); integer keys stay integers (JS numbers in the map)
          const map = new Map<string | number, JValue>();
          for (const [k, v] of node.value as Map<Node, Node>) {
            const key = this.evaluate(k as never, environment) as unknown as JValue;
            if (!['StringValue', 'IntegerValue', 'FloatValue', 'BooleanValue'].includes(key.type)) {
              throw new Error(`Object keys must be strings or numbers: got ${key.type}`);
            }
            const k2 =
              key.type === 'StringValue'
                ? String(key.value)
                : key.type === 'BooleanValue'
                  ? key.value
                    ? 'True'
                    : 'False'
                  : (key.value as number);
            map.set(k2, this.evaluate(v as never, environment) as unknown as JValue);
          }
          result = new rt.ObjectValue(map);
          break;
        }
        case 'ArrayLiteral':
        case 'TupleLiteral':
          // tuples are lists here, so `for a, b in [("x", "y")]` unpacks them
          this.checkList((node.value as unknown[]).length, 'a list literal');
          result = new rt.ArrayValue((node.value as Node[]).map((x) => this.evaluate(x as never, environment)));
          break;
        default:
          result = super.evaluate(statement, environment) as unknown as JValue;
      }
      if (this.forIterables.has(node)) {
        this.mark(result, result.type === 'ObjectValue' ? 'object_access' : 'array_access');
        if (result.type === 'UndefinedValue') result = new rt.ArrayValue([]);
        else if (hasNumericKeys(result))
          result = new rt.ArrayValue(
            [...(result.value as Map<unknown, JValue>).keys()].map((k) => fixKey(rt.convert(k))),
          );
      }
      if (result.type === 'StringValue' && (result.value as string).length > this.opts.budget.maxStringChars) {
        this.over(
          `a string of ${(result.value as string).length} characters (limit ${this.opts.budget.maxStringChars})`,
        );
      }
      if (result.type === 'ArrayValue' && (result.value as unknown[]).length > this.opts.budget.maxListElements) {
        this.over(
          `a list of ${(result.value as unknown[]).length} elements (limit ${this.opts.budget.maxListElements})`,
        );
      }
      if (this.opts.trackUsage && (node.type === 'Identifier' || node.type === 'MemberExpression')) this.mark(result);
      return result as never;
    } catch (e) {
      // the innermost located statement names where a failure happened (the stack unwinds before run() sees it)
      if (tracked && typeof e === 'object' && e !== null && !(LOCATION in e)) {
        (e as Record<symbol, unknown>)[LOCATION] = {
          construct: describeStatement(node),
          line: this.opts.lines?.get(node),
        };
      }
      throw e;
    } finally {
      if (tracked) this.stack.pop();
    }
  }
}

const LOCATION = Symbol('template-location');

function emptyOf(kind: 'array' | 'string' | 'int' | 'undefined'): JValue {
  const rt = jinjaRuntime();
  return kind === 'array'
    ? new rt.ArrayValue([])
    : kind === 'string'
      ? new rt.StringValue('')
      : kind === 'int'
        ? new rt.IntegerValue(0)
        : new rt.UndefinedValue();
}

/** The `chars` argument of strip (positional or `chars=`), or undefined for whitespace. */
function stripChars(args: JValue[]): string | undefined {
  const a = args[0];
  if (!a) return undefined;
  const v = a.type === 'KeywordArgumentsValue' ? (a.value as Map<string, JValue>).get('chars') : a;
  return v && v.type === 'StringValue' ? String(v.value) : undefined;
}

type Proto = Record<string, (this: ChatInterpreter, ...args: never[]) => unknown>;
const proto = ChatInterpreter.prototype as unknown as Proto;

// for: remember the body (iteration counting) and the iterable (undefined → no iterations, as llama.cpp)
proto.evaluateFor = function (this: ChatInterpreter, node: Node, env: Environment) {
  const self = this as unknown as { forBodies: Map<unknown, Node>; forIterables: Set<unknown> };
  const iterable = node.iterable?.type === 'SelectExpression' ? node.iterable.lhs : node.iterable;
  self.forBodies.set(node.body, node);
  self.forIterables.add(iterable);
  const out = base.evaluateFor.call(this, node, env) as JValue;
  const tail = this.breakTail; // the text the iteration wrote before its break (loop-control.ts)
  if (tail === null) return out;
  this.breakTail = null;
  return new (jinjaRuntime().StringValue)(out.value + tail);
};

proto.evaluateBlock = function (this: ChatInterpreter, statements: unknown, env: Environment) {
  const self = this as unknown as {
    forBodies: Map<unknown, Node>;
    iterations: number;
    opts: ChatInterpreterOptions;
    over(s: string): never;
  };
  if (self.forBodies.has(statements) && ++self.iterations > self.opts.budget.maxLoopIterations) {
    self.over(`more than ${self.opts.budget.maxLoopIterations} loop iterations`);
  }
  const text = runBlock(
    statements as Node[],
    (s) => this.evaluate(s as never, env) as unknown as JValue,
    self.forBodies.has(statements),
    (partial) => {
      this.breakTail = partial;
      return base.evaluate.call(this, { type: 'Break' }, env) as never; // the library's own break: ends the loop
    },
  );
  if (text.length > self.opts.budget.maxOutputChars) {
    self.over(`output of ${text.length} characters (limit ${self.opts.budget.maxOutputChars})`);
  }
  return new (jinjaRuntime().StringValue)(text);
};

// + and ~ between a string and none / undefined: concatenation with '' (llama.cpp's workaround)
proto.evaluateBinaryExpression = function (this: ChatInterpreter, node: Node, env: Environment) {
  const op = node.operator?.value as string;
  if (op !== '+' && op !== '~' && op !== '*') return base.evaluateBinaryExpression.call(this, node, env);
  const left = this.evaluate(node.left as never, env) as unknown as JValue;
  const right = this.evaluate(node.right as never, env) as unknown as JValue;
  const rt = jinjaRuntime();
  const self = this as unknown as { opts: ChatInterpreterOptions; over(s: string): never };
  if (
    op === '*' &&
    ((left.type === 'StringValue' && right.type === 'IntegerValue') ||
      (left.type === 'IntegerValue' && right.type === 'StringValue'))
  ) {
    // Python string repetition (llama.cpp has it), sized before it is built
    const [str, n] =
      left.type === 'StringValue'
        ? [String(left.value), Number(right.value)]
        : [String(right.value), Number(left.value)];
    const len = str.length * Math.max(0, n);
    if (len > self.opts.budget.maxStringChars)
      self.over(`a string of ${len} characters (limit ${self.opts.budget.maxStringChars})`);
    return new rt.StringValue(n > 0 ? str.repeat(n) : '');
  }
  if ((isNullish(left) && right.type === 'StringValue') || (isNullish(right) && left.type === 'StringValue')) {
    return new rt.StringValue((isNullish(left) ? '' : left.value) + (isNullish(right) ? '' : right.value));
  }
  if (op === '+' && left.type === 'ArrayValue' && right.type === 'ArrayValue') {
    this.checkList((left.value as unknown[]).length + (right.value as unknown[]).length, 'a list concatenation');
  }
  const pre = (value: JValue) => ({ type: 'Precomputed', value });
  return base.evaluateBinaryExpression.call(this, { ...node, left: pre(left), right: pre(right) }, env);
};

// filters on undefined / none give empty values as llama.cpp does; tojson / string mark their input as used
proto.applyFilter = function (this: ChatInterpreter, operand: JValue, filterNode: Node, env: Environment) {
  const name = (filterNode.type === 'CallExpression' ? filterNode.callee?.value : filterNode.value) as
    | string
    | undefined;
  const self = this as unknown as { mark(v: JValue, op?: string): void; markDeep(v: JValue): void };
  if (name) {
    self.mark(operand, name);
    if (name === 'tojson' || name === 'string') self.markDeep(operand);
  }
  const rt = jinjaRuntime();
  if (name && COERCED_TO_STRING.has(name) && operand.type !== 'StringValue' && operand.type !== 'UndefinedValue') {
    operand = new rt.StringValue(pyRepr(operand)); // llama.cpp coerces these filters' input to a string
  }
  if (name === 'replace') guardStringBuiltins(operand, (n) => this.checkString(n));
  if (name && operand.type === 'UndefinedValue' && name in UNDEFINED_FILTERS) return emptyOf(UNDEFINED_FILTERS[name]);
  if (name && operand.type === 'NullValue' && name in NONE_FILTERS) {
    return NONE_FILTERS[name] === 'array' ? new rt.ArrayValue([]) : new rt.StringValue('None');
  }
  if ((name === 'trim' || name === 'strip') && operand.type === 'StringValue') {
    const args =
      filterNode.type === 'CallExpression'
        ? (filterNode.args as Node[]).map((a) => this.evaluate(a as never, env) as unknown as JValue)
        : [];
    return new rt.StringValue(pyStrip(String(operand.value), true, true, stripChars(args)));
  }
  if (filterNode.type === 'Identifier' && name) {
    if ((name === 'min' || name === 'max') && operand.type === 'ArrayValue') return minMax(operand, name);
    if (name === 'dictsort' && hasNumericKeys(operand)) {
      const entries = [...(operand.value as Map<string | number, JValue>)].sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      );
      return new rt.ArrayValue(entries.map(([k, v]) => new rt.ArrayValue([fixKey(rt.convert(k)), v])));
    }
    if (name === 'string' && (operand.type === 'ArrayValue' || operand.type === 'ObjectValue'))
      return new rt.StringValue(pyRepr(operand));
  }
  const out = base.applyFilter.call(this, operand, filterNode, env);
  return (name === 'items' || name === 'dictsort') && hasNumericKeys(operand) ? fixKeys(out) : out;
};

proto.evaluateTestExpression = function (this: ChatInterpreter, node: Node, env: Environment) {
  const self = this as unknown as { mark(v: JValue, op?: string): void };
  if (!(this as unknown as { opts: ChatInterpreterOptions }).opts.trackUsage)
    return base.evaluateTestExpression.call(this, node, env);
  const operand = this.evaluate(node.operand as never, env) as unknown as JValue;
  self.mark(operand, `test_is_${node.test?.value as string}`);
  return base.evaluateTestExpression.call(this, { ...node, operand: { type: 'Precomputed', value: operand } }, env);
};

proto.evaluateMemberExpression = function (this: ChatInterpreter, expr: Node, env: Environment) {
  const rt = jinjaRuntime();
  const self = this as unknown as { mark(v: JValue, op?: string): void };
  const object = this.evaluate(expr.object as never, env) as unknown as JValue;
  const pre = { type: 'Precomputed', value: object };
  if (expr.computed && expr.property?.type !== 'SliceExpression') {
    const property = this.evaluate(expr.property as never, env) as unknown as JValue;
    self.mark(object, property.type === 'IntegerValue' ? 'array_access' : 'object_access');
    if (object.type === 'ObjectValue' && (property.type === 'IntegerValue' || property.type === 'FloatValue')) {
      // integer keys are JS numbers in the map (see ObjectLiteral above)
      const map = object.value as Map<string | number, JValue>;
      return map.get(property.value as number) ?? map.get(String(property.value)) ?? new rt.UndefinedValue();
    }
    return base.evaluateMemberExpression.call(
      this,
      { ...expr, object: pre, property: { type: 'Precomputed', value: property } },
      env,
    );
  }
  if (!expr.computed) self.mark(object, expr.property?.type === 'IntegerLiteral' ? 'array_access' : 'object_access');
  if (!expr.computed && expr.property?.type === 'Identifier') {
    const name = expr.property.value as string;
    // methods of undefined / none give empty values as llama.cpp's do (`params.properties.items()` without properties)
    if (object.type === 'UndefinedValue' && name in UNDEFINED_FILTERS)
      return new rt.FunctionValue(() => emptyOf(UNDEFINED_FILTERS[name]));
    if (object.type === 'NullValue' && NONE_FILTERS[name] === 'array')
      return new rt.FunctionValue(() => new rt.ArrayValue([]));
    if (name === 'replace') guardStringBuiltins(object, (n) => this.checkString(n));
    if (object.type === 'ArrayValue') {
      const m = listMethod(object, name, (n) => this.checkList(n, 'a list'));
      if (m) return m;
    } else if (object.type === 'StringValue' && name === 'format') {
      return new rt.FunctionValue((args: JValue[]) => new rt.StringValue(pyFormat(String(object.value), args)));
    } else if (object.type === 'StringValue' && (name === 'strip' || name === 'lstrip' || name === 'rstrip')) {
      // the library ignores the `chars` argument and strips Unicode spaces; llama.cpp follows Python / C isspace
      return new rt.FunctionValue(
        (args: JValue[]) =>
          new rt.StringValue(pyStrip(String(object.value), name !== 'rstrip', name !== 'lstrip', stripChars(args))),
      );
    } else if (hasNumericKeys(object)) {
      const map = object.value as Map<string | number, JValue>;
      if (name === 'get') {
        return new rt.FunctionValue(
          ([k, d]: JValue[]) => (k ? map.get(k.value as string | number) : undefined) ?? d ?? new rt.NullValue(),
        );
      }
      if (name === 'items' || name === 'keys' || name === 'dictsort') {
        const f = base.evaluateMemberExpression.call(this, { ...expr, object: pre }, env);
        return new rt.FunctionValue((args: JValue[], scope: unknown) =>
          fixKeys((f.value as (a: JValue[], s: unknown) => JValue)(args, scope)),
        );
      }
    }
  }
  return base.evaluateMemberExpression.call(this, { ...expr, object: pre }, env);
};

proto.evaluateFilterStatement = function (this: ChatInterpreter, node: Node, env: Environment) {
  return base.evaluateFilterStatement.call(this, node, env);
};
