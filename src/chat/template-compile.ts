/**
 * Compiling a chat template: `@huggingface/jinja`'s parser (after the source fixes below), the line of each
 * statement (for error messages), and a small cache keyed by the text. A template that does not parse is
 * `LlmError('template')` naming the line; engines compile at load so this surfaces there, not on the first message.
 */

import { parse, tokenize } from '@huggingface/jinja';
import { LlmError } from '../errors.js';
import type { NodeLines } from './jinja-interpreter.js';

/** A parsed template. */
export interface CompiledTemplate {
  readonly source: string;
  readonly program: ReturnType<typeof parse>;
  /** 1-based source line of each `for` / `if` / `elif` / `set` / `macro` statement. */
  readonly lines: NodeLines;
}

const cache = new Map<string, CompiledTemplate>();

/**
 * Python string literals allow a backslash-newline line continuation (Mistral's templates use it); @huggingface/jinja
 * 0.5 rejects it. Inside `{{ }}` / `{% %}` tags it is removed, as Python would; template text outside tags is untouched.
 */
function normalizeContinuations(text: string): string {
  if (!text.includes('\\\n')) return text;
  return text.replace(/\{[{%][\s\S]*?[%}]\}/g, (tag) => tag.replaceAll('\\\n', ''));
}

/** Lines of the statement tags, by keyword, in source order (comments skipped). */
function tagLines(source: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const re = /\{#[\s\S]*?#\}|\{%[-+]?\s*(for|if|elif|set|macro)\b/g;
  let line = 1;
  let last = 0;
  for (let m = re.exec(source); m; m = re.exec(source)) {
    for (let i = last; i < m.index; i++) if (source.charCodeAt(i) === 10) line++;
    last = m.index;
    if (!m[1]) continue;
    const kind = m[1] === 'elif' ? 'if' : m[1];
    let list = out.get(kind);
    if (!list) out.set(kind, (list = []));
    list.push(line);
  }
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: @huggingface/jinja AST and runtime values are untyped
type Node = { type: string } & Record<string, any>;

function nodeLines(program: ReturnType<typeof parse>, source: string): NodeLines {
  const lines: NodeLines = new WeakMap();
  const tags = tagLines(source);
  const seen = new Map<string, number>();
  const kindOf: Record<string, string> = { For: 'for', If: 'if', Set: 'set', SetStatement: 'set', Macro: 'macro' };
  const visit = (stmts: readonly Node[] | undefined, depth: number): void => {
    if (!stmts || depth > 200) return;
    for (const s of stmts) {
      const kind = kindOf[s.type];
      if (kind) {
        const n = seen.get(kind) ?? 0;
        seen.set(kind, n + 1);
        const line = tags.get(kind)?.[n];
        if (line !== undefined) lines.set(s, line);
      }
      visit(s.body as Node[] | undefined, depth + 1);
      if (s.type === 'If') visit(s.alternate as Node[] | undefined, depth + 1);
      if (s.type === 'For') visit(s.defaultBlock as Node[] | undefined, depth + 1);
    }
  };
  visit((program as unknown as Node).body as Node[], 0);
  return lines;
}

/**
 * Where a parse error is (the library's messages carry no position): the shortest token prefix from which every
 * longer prefix fails with the same message ends at the offending token; its line is found by walking the token
 * values through the source. Bounded to 300 ms; templates that end inside an open block are named as such.
 */
function locateParseError(source: string, message: string): { line?: number; message: string } {
  if (/reading '?type'?|undefined/.test(message)) {
    return {
      line: source.split('\n').length,
      message: 'the template ends inside an open block (a missing endfor / endif / endmacro / endset?)',
    };
  }
  let tokens: ReturnType<typeof tokenize>;
  try {
    tokens = tokenize(source, { lstrip_blocks: true, trim_blocks: true });
  } catch {
    return { message };
  }
  const deadline = Date.now() + 300;
  let first = tokens.length;
  for (let n = tokens.length - 1; n >= 1 && Date.now() < deadline; n--) {
    let same = false;
    try {
      parse(tokens.slice(0, n));
    } catch (e) {
      same = (e as Error).message === message;
    }
    if (!same) break;
    first = n;
  }
  if (Date.now() >= deadline) return { message };
  let pos = 0;
  for (let i = 0; i < first && i < tokens.length; i++) {
    const v = tokens[i].value;
    const at = v === '' ? -1 : source.indexOf(v, pos);
    if (at >= 0) pos = at + (i === first - 1 ? 0 : v.length);
  }
  return { line: source.slice(0, pos).split('\n').length, message };
}

/** Parses a template (cached); `LlmError('template')` when it does not parse. */
export function compileTemplate(source: string): CompiledTemplate {
  let t = cache.get(source);
  if (t) return t;
  if (typeof source !== 'string')
    throw new LlmError('template', `the chat template must be a string, got ${typeof source}`);
  let program: ReturnType<typeof parse>;
  try {
    // what the library's Template constructor does, without pulling in its formatter
    program = parse(tokenize(normalizeContinuations(source), { lstrip_blocks: true, trim_blocks: true }));
  } catch (e) {
    const { line, message } = locateParseError(source, (e as Error).message);
    throw new LlmError(
      'template',
      `parsing the chat template failed${line !== undefined ? ` near line ${line}` : ''}: ${message}; pass a valid Jinja template`,
      { cause: e, details: line !== undefined ? { line } : {} },
    );
  }
  t = { source, program, lines: nodeLines(program, source) };
  if (cache.size >= 16) cache.clear();
  cache.set(source, t);
  return t;
}
