/**
 * `chat_template_kwargs` of a chat request (llama.cpp's name): template variables over the defaults, e.g.
 * `{ enable_thinking: false }` or `{ reasoning_effort: 'high' }`. Values must be JSON data; names must be
 * identifiers and may not replace what the renderer itself provides (`messages`, `tools`, `bos_token`, …).
 */

import { LlmError } from '../errors.js';

/** Names a request may not override (the conversation itself and the interpreter's globals). */
const RESERVED = new Set([
  'messages',
  'tools',
  'bos_token',
  'eos_token',
  'add_generation_prompt',
  'range',
  'raise_exception',
  'strftime_now',
  'namespace',
  'true',
  'false',
  'none',
  'True',
  'False',
  'None',
]);

const MAX_DEPTH = 32;
const MAX_NODES = 10_000;

function fail(message: string, field = 'chat_template_kwargs'): never {
  throw new LlmError('invalid-request', `chat_template_kwargs: ${message}`, { details: { field } });
}

/**
 * Checks `chat_template_kwargs`; returns it (or `{}` when absent). Throws `LlmError('invalid-request')` naming the
 * field for a non-object, a reserved or non-identifier name, `enable_thinking` that is not a boolean, or a value
 * that is not JSON data (functions, cycles, non-finite numbers, more than 32 levels or 10,000 values).
 */
export function validateChatTemplateKwargs(kwargs: unknown): Readonly<Record<string, unknown>> {
  if (kwargs === undefined || kwargs === null) return {};
  if (typeof kwargs !== 'object' || Array.isArray(kwargs))
    fail(`must be an object of template variables, got ${Array.isArray(kwargs) ? 'an array' : typeof kwargs}`);
  let nodes = 0;
  const check = (v: unknown, path: string, depth: number, seen: Set<object>): void => {
    if (++nodes > MAX_NODES) fail(`more than ${MAX_NODES} values`, path);
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels at ${path}`, path);
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) fail(`${path} must be a finite number, got ${v}`, path);
      return;
    }
    if (typeof v === 'object') {
      if (seen.has(v)) fail(`${path} contains a cycle`, path);
      seen.add(v);
      if (Array.isArray(v)) v.forEach((x, i) => check(x, `${path}[${i}]`, depth + 1, seen));
      else for (const [k, x] of Object.entries(v)) check(x, `${path}.${k}`, depth + 1, seen);
      seen.delete(v);
      return;
    }
    fail(`${path} must be JSON data (string, number, boolean, null, array, object), got ${typeof v}`, path);
  };
  for (const [name, value] of Object.entries(kwargs)) {
    const field = `chat_template_kwargs.${name}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      fail(`'${name}' is not a template variable name (letters, digits, _)`, field);
    if (RESERVED.has(name)) fail(`'${name}' is set by the renderer and cannot be overridden`, field);
    if (name === 'enable_thinking' && typeof value !== 'boolean')
      fail(`enable_thinking must be a boolean, got ${JSON.stringify(value)}`, field);
    check(value, field, 0, new Set());
  }
  return kwargs as Readonly<Record<string, unknown>>;
}
