/**
 * Compiling a chat template: `@huggingface/jinja`'s parser (after the source fixes below), the line of each
 * statement (for error messages), and a small cache keyed by the text. A template that does not parse is
 * `LlmError('template')` naming the line; engines compile at load so this surfaces there, not on the first message.
 */

import { Template } from '@huggingface/jinja';
import { LlmError } from '../errors.js';
import type { NodeLines } from './jinja-interpreter.js';

/** A parsed template. */
export interface CompiledTemplate {
  readonly source: string;
  readonly program: Template['parsed'];
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Node = { type: string } & Record<string, any>;

function nodeLines(program: Template['parsed'], source: string): NodeLines {
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

/** Where a parse error is: the line of the first tag the lexer/parser stops at is not reported by the library, so
 * the message names the error and, when the message quotes a token, the first line holding it. */
function parseErrorLine(source: string, message: string): number | undefined {
  const m = /['"`]([^'"`\n]{1,40})['"`]/.exec(message);
  if (!m) return undefined;
  const idx = source.indexOf(m[1]);
  return idx < 0 ? undefined : source.slice(0, idx).split('\n').length;
}

/** Parses a template (cached); `LlmError('template')` when it does not parse. */
export function compileTemplate(source: string): CompiledTemplate {
  let t = cache.get(source);
  if (t) return t;
  if (typeof source !== 'string') throw new LlmError('template', `the chat template must be a string, got ${typeof source}`);
  let program: Template['parsed'];
  try {
    program = new Template(normalizeContinuations(source)).parsed;
  } catch (e) {
    const msg = (e as Error).message;
    const line = parseErrorLine(source, msg);
    throw new LlmError(
      'template',
      `parsing the chat template failed${line !== undefined ? ` near line ${line}` : ''}: ${msg}; pass a valid Jinja template`,
      { cause: e, details: line !== undefined ? { line } : {} },
    );
  }
  t = { source, program, lines: nodeLines(program, source) };
  if (cache.size >= 16) cache.clear();
  cache.set(source, t);
  return t;
}
