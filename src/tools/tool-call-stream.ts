/**
 * Tool calls read while they are being written, for streamed answers: for each call begun so far, its name once
 * complete, an id the model wrote, and its arguments text so far — so `delta.tool_calls` fragments can go out as the
 * model generates them. Arguments are the JSON value as the model wrote it with the whitespace outside strings
 * removed (`minifyJson`): a filter that only ever appends, so every streamed prefix is a prefix of the final text, and
 * `parseToolCalls` returns that same text for the finished call. JSON-argument syntaxes stream character by character
 * (hermes, llama3, mistral, mistral-args, harmony, granite, phi4); qwen3-coder's and seed-oss's XML parameters stream one whole
 * parameter at a time (`{"p":v` … `}`, as `JSON.stringify` of the parsed object writes them); lfm2 and gemma4 return
 * null here (the caller sends each of their calls whole once it parses).
 */

import type { ToolCallFormat } from './tool-call-format.js';
import type { ToolFunction } from './tool-spec.js';

/**
 * The rest of a harmony call header after ` to=functions.`: the name, then up to `<|message|>` — the channel header
 * with an optional `<|constrain|>` (`f <|constrain|>json`), or, with the recipient in the role header
 * (`assistant to=functions.f<|channel|>commentary json`), the channel header after it.
 */
export const HARMONY_CALL_HEADER = /^([\w.-]+)(?:\s*<\|channel\|>)?[^<]*?(?:<\|constrain\|>\s*\w*\s*)?<\|message\|>/;

/** A Qwen3-Coder parameter's value: the raw text for string parameters, else its JSON (raw text if not JSON). */
export function xmlValue(raw: string, schema: unknown): unknown {
  const type = (schema as { type?: unknown } | undefined)?.type;
  if (type === 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** `<parameter=p>v</parameter>` matches: Qwen3-Coder writes each value between newlines (dropped), Seed-OSS bare. */
export function xmlParameters(trimLines: boolean): RegExp {
  return trimLines
    ? /<parameter=([^>\n]+)>\n?([\s\S]*?)\n?<\/parameter>/g
    : /<parameter=([^>\n]+)>([\s\S]*?)<\/parameter>/g;
}

/**
 * Qwen3-Coder models may leave out the first call's `<tool_call>` (llama.cpp accepts `<function=f>` as the first
 * call's start): `text` with it put back before a `<function=` that comes before any `<tool_call>`.
 */
export function withFirstCallOpened(text: string): string {
  const f = text.indexOf('<function=');
  const t = text.indexOf('<tool_call>');
  return f >= 0 && (t < 0 || f < t) ? `${text.slice(0, f)}<tool_call>\n${text.slice(f)}` : text;
}

/** A call as far as the text shows it. */
export interface PartialCall {
  readonly name: string;
  readonly id?: string;
  /** Minified arguments text so far. */
  readonly args: string;
}

/** `raw` without whitespace outside JSON strings (prefix-stable: minify(a + b) starts with minify(a)). */
export function minifyJson(raw: string): string {
  let out = '';
  let inStr = false;
  for (let k = 0; k < raw.length; k++) {
    const c = raw[k];
    if (inStr) {
      out += c;
      if (c === '\\' && k + 1 < raw.length) out += raw[++k];
      else if (c === '"') inStr = false;
    } else if (c === '"') {
      inStr = true;
      out += c;
    } else if (c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t') out += c;
  }
  return out;
}

const isWs = (c: string | undefined): boolean => c === ' ' || c === '\n' || c === '\r' || c === '\t';

function skipWs(s: string, i: number): number {
  while (i < s.length && isWs(s[i])) i++;
  return i;
}

/** End (exclusive) of the JSON value starting at `i` (no leading whitespace), or -1 while it is unfinished. */
export function valueEnd(s: string, i: number): number {
  const c = s[i];
  if (c === undefined) return -1;
  if (c === '"' || c === '{' || c === '[') {
    let depth = 0;
    let inStr = false;
    for (let k = i; k < s.length; k++) {
      const ch = s[k];
      if (inStr) {
        if (ch === '\\') k++;
        else if (ch === '"') {
          inStr = false;
          if (depth === 0) return k + 1;
        }
      } else if (ch === '"') inStr = true;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return k + 1;
      }
    }
    return -1;
  }
  // A number or literal: ends at a delimiter (unfinished while the text ends inside it).
  for (let k = i; k < s.length; k++) if (s[k] === ',' || s[k] === '}' || s[k] === ']' || isWs(s[k])) return k;
  return -1;
}

/** One member of an object being written: its key (decoded) and the value's span (end −1 while unfinished). */
interface Member {
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

/** The members of the object at `at` (a `{`) written so far, and its end (−1 while unfinished). */
export function objectMembers(s: string, at: number): { members: Member[]; end: number } {
  const members: Member[] = [];
  let i = skipWs(s, at + 1);
  for (;;) {
    if (i >= s.length) return { members, end: -1 };
    if (s[i] === '}') return { members, end: i + 1 };
    if (s[i] !== '"') return { members, end: -1 };
    const keyEnd = valueEnd(s, i);
    if (keyEnd < 0) return { members, end: -1 };
    let key: string;
    try {
      key = JSON.parse(s.slice(i, keyEnd)) as string;
    } catch {
      return { members, end: -1 };
    }
    i = skipWs(s, keyEnd);
    if (s[i] !== ':') return { members, end: -1 };
    const start = skipWs(s, i + 1);
    if (start >= s.length) return { members, end: -1 };
    const end = valueEnd(s, start);
    members.push({ key, start, end });
    if (end < 0) return { members, end: -1 };
    i = skipWs(s, end);
    if (s[i] === ',') i = skipWs(s, i + 1);
  }
}

/** The string value of member `key`, when complete. */
function stringMember(s: string, members: readonly Member[], key: string): string | undefined {
  const m = members.find((x) => x.key === key);
  if (!m || m.end < 0 || s[m.start] !== '"') return undefined;
  try {
    return JSON.parse(s.slice(m.start, m.end)) as string;
  } catch {
    return undefined;
  }
}

/** Minified text of the value at `start` … `end` (end −1: to the end of the text, still being written). */
function argsFrom(s: string, start: number, end: number): string {
  return minifyJson(s.slice(start, end < 0 ? s.length : end));
}

/** A `{"name": …, <argKey>: …}` call object at `at`; null until its name is complete. */
function objectCall(s: string, at: number, argKeys: readonly string[]): { call: PartialCall | null; end: number } {
  const { members, end } = objectMembers(s, at);
  const name = stringMember(s, members, 'name');
  if (name === undefined) return { call: null, end };
  const id = stringMember(s, members, 'id');
  const arg = members.find((m) => argKeys.includes(m.key));
  // A string-valued arguments member (JSON inside a string) is not streamed: it comes whole at the end.
  const args = arg && s[arg.start] !== '"' ? argsFrom(s, arg.start, arg.end) : '';
  return { call: { name, ...(id !== undefined ? { id } : {}), args }, end };
}

/** Calls in a JSON array at `at` (a `[`). */
function arrayCalls(s: string, at: number, argKeys: readonly string[], out: PartialCall[]): void {
  let i = skipWs(s, at + 1);
  while (s[i] === '{') {
    const { call, end } = objectCall(s, i, argKeys);
    if (call) out.push(call);
    if (end < 0) return;
    i = skipWs(s, end);
    if (s[i] !== ',') return;
    i = skipWs(s, i + 1);
  }
}

/** Every occurrence of `open` in `s`, in order, with the index just after it. */
function* after(s: string, open: string): Generator<number> {
  for (let at = s.indexOf(open); at >= 0; at = s.indexOf(open, at + open.length)) yield at + open.length;
}

/** Qwen3-Coder calls: `{` once the function is named, each parameter once closed, `}` once the function is. */
function xmlCalls(
  text: string,
  tools: readonly ToolFunction[],
  out: PartialCall[],
  open = '<tool_call>',
  trimLines = true,
): void {
  for (const i of after(text, open)) {
    const m = /^\s*<function=([^>\n]+)>/.exec(text.slice(i));
    if (!m) continue;
    const bodyStart = i + m[0].length;
    const close = text.indexOf('</function>', bodyStart);
    const body = text.slice(bodyStart, close < 0 ? text.length : close);
    const schema = tools.find((t) => t.name === m[1])?.parameters as
      | { properties?: Record<string, unknown> }
      | undefined;
    const seen = new Set<string>();
    const parts: string[] = [];
    let repeated = false;
    const pr = xmlParameters(trimLines);
    for (let p = pr.exec(body); p; p = pr.exec(body)) {
      // A repeated parameter rewrites an earlier one: stop streaming this call there.
      repeated = seen.has(p[1]);
      if (repeated) break;
      seen.add(p[1]);
      parts.push(`${JSON.stringify(p[1])}:${JSON.stringify(xmlValue(p[2], schema?.properties?.[p[1]]))}`);
    }
    out.push({ name: m[1], args: `{${parts.join(',')}${close >= 0 && !repeated ? '}' : ''}` });
  }
}

/**
 * The calls begun in `text` (the answer from the start, reasoning removed; harmony: the raw output), or null for
 * syntaxes not read while written. `tools` gives qwen3-coder's parameter types.
 */
export function partialToolCalls(
  format: ToolCallFormat,
  text: string,
  tools: readonly ToolFunction[] = [],
): PartialCall[] | null {
  const out: PartialCall[] = [];
  const json = ['arguments', 'parameters'];
  switch (format) {
    case 'qwen3-coder':
      xmlCalls(withFirstCallOpened(text), tools, out);
      return out;
    case 'seed-oss':
      xmlCalls(text, tools, out, '<seed:tool_call>', false);
      return out;
    case 'hermes':
      for (const i of after(text, '<tool_call>')) {
        const at = skipWs(text, i);
        if (text[at] !== '{') continue;
        const { call } = objectCall(text, at, json);
        if (call) out.push(call);
      }
      return out;
    case 'llama3': {
      const t = text.replace('<|python_tag|>', '');
      for (const i of after(t, '{"name"')) {
        const { call } = objectCall(t, i - '{"name"'.length, ['parameters', 'arguments']);
        if (call) out.push(call);
      }
      return out;
    }
    case 'mistral':
    case 'granite':
    case 'phi4': {
      const open = format === 'mistral' ? '[TOOL_CALLS]' : format === 'granite' ? '<|tool_call|>' : 'functools';
      for (const i of after(text, open)) {
        const at = skipWs(text, i);
        if (text[at] === '[') arrayCalls(text, at, json, out);
        else if (text[at] === '{') {
          const { call } = objectCall(text, at, json);
          if (call) out.push(call);
        }
      }
      return out;
    }
    case 'mistral-args':
      for (const i of after(text, '[TOOL_CALLS]')) {
        const m = /^\s*([^[\s]+?)(?:\[CALL_ID\]([^[]*))?\[ARGS\]/.exec(text.slice(i));
        if (!m) continue;
        const start = skipWs(text, i + m[0].length);
        out.push({ name: m[1], ...(m[2] ? { id: m[2] } : {}), args: argsFrom(text, start, valueEnd(text, start)) });
      }
      return out;
    case 'harmony':
      for (const i of after(text, ' to=functions.')) {
        const m = HARMONY_CALL_HEADER.exec(text.slice(i));
        if (!m) continue;
        const start = skipWs(text, i + m[0].length);
        out.push({ name: m[1], args: argsFrom(text, start, valueEnd(text, start)) });
      }
      return out;
    default:
      return null;
  }
}
