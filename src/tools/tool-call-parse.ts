/**
 * Reads tool calls back from a model's answer text in its native syntax (see `tool-call-format.ts`): the calls
 * (name + arguments as JSON text, as OpenAI returns them) and the answer text around them. Malformed call text is
 * left in the content rather than dropped. JSON arguments are the value as the model wrote it, whitespace outside
 * strings removed (`minifyJson`), so a streamed call's fragments (`tool-call-stream.ts`) concatenate to exactly this.
 */

import type { ToolCallFormat } from './tool-call-format.js';
import {
  HARMONY_CALL_HEADER,
  minifyJson,
  objectMembers,
  valueEnd,
  withFirstCallOpened,
  xmlParameters,
  xmlValue,
} from './tool-call-stream.js';
import type { ToolFunction } from './tool-spec.js';

/** One parsed call. */
export interface ParsedCall {
  readonly name: string;
  /** JSON text of the arguments object. */
  readonly arguments: string;
  /** An id the model wrote (Mistral), if any. */
  readonly id?: string;
}

/** Index just past the JSON value starting at `i` (an object, array or string), or -1 when it is unfinished. */
function jsonEnd(s: string, i: number): number {
  let depth = 0;
  let inStr = false;
  for (let k = i; k < s.length; k++) {
    const c = s[k];
    if (inStr) {
      if (c === '\\') k++;
      else if (c === '"') {
        inStr = false;
        if (depth === 0) return k + 1;
      }
    } else if (c === '"') inStr = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return k + 1;
    }
  }
  return -1;
}

function parseJsonAt(s: string, i: number): { value: unknown; start: number; end: number } | null {
  while (i < s.length && /\s/.test(s[i])) i++;
  const end = jsonEnd(s, i);
  if (end < 0) return null;
  try {
    return { value: JSON.parse(s.slice(i, end)) as unknown, start: i, end };
  } catch {
    return null;
  }
}

/** Arguments text of a parsed value written at s[start, end): a JSON string's own text, else the value minified. */
function argsText(value: unknown, s: string, start: number, end: number): string {
  if (typeof value === 'string') return value;
  return value === null || value === undefined ? '{}' : minifyJson(s.slice(start, end));
}

/** A call object parsed from s at `start`: its name, id and the first member named like arguments (as written). */
function callOf(o: unknown, argKeys: readonly string[], s: string, start: number): ParsedCall | null {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return null;
  const r = o as Record<string, unknown>;
  const name = r.name;
  if (typeof name !== 'string') return null;
  const m = objectMembers(s, start).members.find((x) => argKeys.includes(x.key));
  const args = m ? argsText(JSON.parse(s.slice(m.start, m.end)) as unknown, s, m.start, m.end) : '{}';
  return { name, arguments: args, ...(typeof r.id === 'string' ? { id: r.id } : {}) };
}

/** Start of each element of the JSON array written at `start`. */
function elementStarts(s: string, start: number): number[] {
  const starts: number[] = [];
  const ws = (k: number): number => {
    while (k < s.length && /\s/.test(s[k])) k++;
    return k;
  };
  let i = ws(start + 1);
  while (i < s.length && s[i] !== ']') {
    starts.push(i);
    const e = valueEnd(s, i);
    if (e < 0) break;
    i = ws(e);
    if (s[i] !== ',') break;
    i = ws(i + 1);
  }
  return starts;
}

/** The result: calls and the text outside them. */
export interface ParsedAnswer {
  readonly content: string;
  readonly calls: readonly ParsedCall[];
}

/** Finds each `open`, reads calls after it with `read` (returning the end index), keeps the rest as content. */
function scan(text: string, open: string, read: (s: string, at: number, calls: ParsedCall[]) => number): ParsedAnswer {
  const calls: ParsedCall[] = [];
  let content = '';
  let i = 0;
  for (;;) {
    const at = text.indexOf(open, i);
    if (at < 0) break;
    const end = read(text, at + open.length, calls);
    if (end < 0) break;
    content += text.slice(i, at);
    i = end;
  }
  content += text.slice(i);
  return { content: calls.length > 0 ? content.trim() : content, calls };
}

function skip(s: string, at: number, lit: string): number {
  let k = at;
  while (k < s.length && /\s/.test(s[k])) k++;
  return s.startsWith(lit, k) ? k + lit.length : at;
}

function jsonList(argKeys: readonly string[], close = ''): (s: string, at: number, calls: ParsedCall[]) => number {
  return (s, at, calls) => {
    const j = parseJsonAt(s, at);
    if (!j) return -1;
    const list = Array.isArray(j.value) ? j.value : [j.value];
    const starts = Array.isArray(j.value) ? elementStarts(s, j.start) : [j.start];
    const got = list.map((x, k) => callOf(x, argKeys, s, starts[k] ?? j.start));
    if (got.some((c) => c === null)) return -1;
    calls.push(...(got as ParsedCall[]));
    return close ? skip(s, j.end, close) : j.end;
  };
}

/** Python-style literal list `[f(a="x", b=1), g()]` (LFM2) → calls. */
function pythonCalls(src: string): ParsedCall[] | null {
  const calls: ParsedCall[] = [];
  const re = /([A-Za-z_][\w.-]*)\(([^()]*)\)/g;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    const args: Record<string, unknown> = {};
    const argRe =
      /([A-Za-z_]\w*)\s*=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|True|False|None|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\[[^\]]*\]|\{[^}]*\})/g;
    for (let a = argRe.exec(m[2]); a; a = argRe.exec(m[2])) {
      const v = a[2];
      if (v.startsWith("'")) args[a[1]] = v.slice(1, -1).replace(/\\'/g, "'");
      else if (v === 'True' || v === 'False') args[a[1]] = v === 'True';
      else if (v === 'None') args[a[1]] = null;
      else {
        try {
          args[a[1]] = JSON.parse(v) as unknown;
        } catch {
          args[a[1]] = v;
        }
      }
    }
    calls.push({ name: m[1], arguments: JSON.stringify(args) });
  }
  return calls.length > 0 ? calls : null;
}

/** Gemma 4 values (`<|"|>text<|"|>` strings, bare keys) → JSON text. */
function gemmaToJson(src: string): string {
  const strings: string[] = [];
  const withSlots = src.replace(/<\|"\|>([\s\S]*?)<\|"\|>/g, (_m, t: string) => `\u0000${strings.push(t) - 1}\u0000`);
  const quoted = withSlots.replace(
    /([{,]\s*)([^:{}",[\]\u0000]+?)\s*:/g,
    (_m, p: string, k: string) => `${p}${JSON.stringify(k.trim())}:`,
  );
  return quoted.replace(/\u0000(\d+)\u0000/g, (_m, n: string) => JSON.stringify(strings[Number(n)]));
}

/**
 * Reads one `<function=f>…</function>` call with `<parameter=p>` values (Qwen3-Coder: each value between newlines,
 * `trimLines`; Seed-OSS: written bare) up to `close`.
 */
function xmlCallReader(
  tools: readonly ToolFunction[],
  close: string,
  trimLines: boolean,
): (s: string, at: number, calls: ParsedCall[]) => number {
  return (s, at, calls) => {
    const m = /^\s*<function=([^>\n]+)>([\s\S]*?)<\/function>\s*/.exec(s.slice(at));
    if (!m) return -1;
    const schema = tools.find((t) => t.name === m[1])?.parameters as
      | { properties?: Record<string, unknown> }
      | undefined;
    const args: Record<string, unknown> = {};
    const pr = xmlParameters(trimLines);
    for (let p = pr.exec(m[2]); p; p = pr.exec(m[2])) args[p[1]] = xmlValue(p[2], schema?.properties?.[p[1]]);
    calls.push({ name: m[1], arguments: JSON.stringify(args) });
    return skip(s, at + m[0].length, close);
  };
}

/** Parses `text` (the answer, reasoning already removed) for calls in `format`. */
export function parseToolCalls(format: ToolCallFormat, text: string, tools: readonly ToolFunction[]): ParsedAnswer {
  switch (format) {
    case 'hermes':
      return scan(text, '<tool_call>', (s, at, calls) => {
        const j = parseJsonAt(s, at);
        const c = j && callOf(j.value, ['arguments', 'parameters'], s, j.start);
        if (!j || !c) return -1;
        calls.push(c);
        return skip(s, j.end, '</tool_call>');
      });
    case 'qwen3-coder': {
      const got = scan(withFirstCallOpened(text), '<tool_call>', xmlCallReader(tools, '</tool_call>', true));
      return got.calls.length > 0 ? got : { content: text, calls: [] };
    }
    case 'seed-oss':
      return scan(text, '<seed:tool_call>', xmlCallReader(tools, '</seed:tool_call>', false));
    case 'llama3': {
      const t = text.replace('<|python_tag|>', '');
      return scan(t, '{"name"', (s, at, calls) => {
        const j = parseJsonAt(s, at - '{"name"'.length);
        const c = j && callOf(j.value, ['parameters', 'arguments'], s, j.start);
        if (!j || !c) return -1;
        calls.push(c);
        return skip(s, j.end, ';');
      });
    }
    case 'mistral':
      return scan(text, '[TOOL_CALLS]', jsonList(['arguments', 'parameters']));
    case 'mistral-args':
      return scan(text, '[TOOL_CALLS]', (s, at, calls) => {
        const m = /^\s*([^[\s]+?)(?:\[CALL_ID\]([^[]*))?\[ARGS\]/.exec(s.slice(at));
        if (!m) return -1;
        const j = parseJsonAt(s, at + m[0].length);
        if (!j) return -1;
        calls.push({ name: m[1], arguments: argsText(j.value, s, j.start, j.end), ...(m[2] ? { id: m[2] } : {}) });
        return j.end;
      });
    case 'harmony':
      return scan(text, ' to=functions.', (s, at, calls) => {
        const m = HARMONY_CALL_HEADER.exec(s.slice(at));
        if (!m) return -1;
        const j = parseJsonAt(s, at + m[0].length);
        if (!j) return -1;
        calls.push({ name: m[1], arguments: argsText(j.value, s, j.start, j.end) });
        return skip(s, j.end, '<|call|>');
      });
    case 'granite':
      return scan(text, '<|tool_call|>', jsonList(['arguments', 'parameters']));
    case 'phi4':
      return scan(text, 'functools', jsonList(['arguments', 'parameters']));
    case 'lfm2':
      return scan(text, '<|tool_call_start|>', (s, at, calls) => {
        const end = s.indexOf('<|tool_call_end|>', at);
        const got = pythonCalls(s.slice(at, end < 0 ? s.length : end));
        if (!got) return -1;
        calls.push(...got);
        return end < 0 ? s.length : end + '<|tool_call_end|>'.length;
      });
    case 'gemma4':
      return scan(text, '<|tool_call>', (s, at, calls) => {
        const m = /^call:([\w.-]+)/.exec(s.slice(at));
        if (!m) return -1;
        const close = s.indexOf('<tool_call|>', at);
        const body = s.slice(at + m[0].length, close < 0 ? s.length : close);
        try {
          calls.push({ name: m[1], arguments: JSON.stringify(JSON.parse(gemmaToJson(body.trim() || '{}'))) });
        } catch {
          return -1;
        }
        return close < 0 ? s.length : close + '<tool_call|>'.length;
      });
  }
}
