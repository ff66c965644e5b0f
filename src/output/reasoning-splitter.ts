/**
 * Splits a model's streamed output into reasoning and answer text (OpenAI-compatible servers' `reasoning_content`
 * and `content`), as llama.cpp's reasoning parsers do:
 * - tags: output that starts (after whitespace) with the open tag, or every output when the prompt already opened
 *   it, is reasoning up to the close tag; whitespace right after the close tag is dropped; an unclosed reasoning at
 *   the end stays reasoning. A tag split across deltas is held back until it is known. Where the syntax lets a tool
 *   call end the reasoning (`endsAt`: Qwen3-Coder / Qwen3.5 `<tool_call>`, as llama.cpp's `thinking_end_tags`), the
 *   reasoning also ends where a call opens, and the call starts the answer.
 * - harmony (gpt-oss): `<|channel|>analysis<|message|>…` is reasoning, `<|channel|>final<|message|>…` the answer;
 *   headers and `<|end|>` / `<|start|>assistant` markers never reach either.
 */

import type { ReasoningFormat } from './reasoning-format.js';

/** Text split from one delta. */
export interface SplitText {
  readonly reasoning: string;
  readonly content: string;
}

/** Longest suffix of `s` that is a proper prefix of `tag` (a tag possibly continued by the next delta). */
function partialSuffix(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (tag.startsWith(s.slice(s.length - n))) return n;
  return 0;
}

/** Streaming splitter of one output. */
export class ReasoningSplitter {
  private readonly format: ReasoningFormat;
  private state: 'start' | 'reasoning' | 'content' | 'after-close' | 'header' | 'body' | 'role' | 'lead';
  private buf = '';
  private channel = '';
  /** The harmony message being headed names a recipient in its role header (`assistant to=functions.f`). */
  private recipient = false;
  /** Markers that end the reasoning and stay in the answer (a tool call opening inside it). */
  private readonly endsAt: readonly string[];

  constructor(format: ReasoningFormat, startInside = false, endsAt: readonly string[] = []) {
    this.format = format;
    this.endsAt = endsAt;
    this.state =
      format.kind === 'none' ? 'content' : format.kind === 'harmony' ? 'lead' : startInside ? 'reasoning' : 'start';
    // Harmony output begins with a channel header (the prompt ends with `<|start|>assistant`), possibly after a
    // recipient continuing that role header (` to=functions.f<|channel|>commentary json<|message|>`); a body before
    // any header is the answer.
    this.channel = 'final';
  }

  /** Splits the next delta. */
  push(text: string): SplitText {
    this.buf += text;
    return this.format.kind === 'harmony' ? this.harmony(false) : this.tags(false);
  }

  /** Releases what was held back at the end of the output. */
  flush(): SplitText {
    return this.format.kind === 'harmony' ? this.harmony(true) : this.tags(true);
  }

  private tags(end: boolean): SplitText {
    if (this.format.kind !== 'tags') return { reasoning: '', content: this.take() };
    const { open, close } = this.format;
    let reasoning = '';
    let content = '';
    for (;;) {
      if (this.state === 'start') {
        const lead = this.buf.length - this.buf.trimStart().length;
        const rest = this.buf.slice(lead);
        if (rest.startsWith(open)) {
          this.buf = rest.slice(open.length);
          this.state = 'reasoning';
          continue;
        }
        if (!end && (rest.length === 0 || open.startsWith(rest))) break; // not known yet
        this.state = 'content';
        continue;
      }
      if (this.state === 'reasoning') {
        const i = this.buf.indexOf(close);
        const cut = this.firstEnd(i);
        if (cut >= 0) {
          // A call opening before the close tag ends the reasoning; the call is the answer's.
          reasoning += this.buf.slice(0, cut);
          this.buf = this.buf.slice(cut);
          this.state = 'content';
          continue;
        }
        if (i >= 0) {
          reasoning += this.buf.slice(0, i);
          this.buf = this.buf.slice(i + close.length);
          this.state = 'after-close';
          continue;
        }
        const keep = end
          ? 0
          : Math.max(partialSuffix(this.buf, close), ...this.endsAt.map((t) => partialSuffix(this.buf, t)));
        reasoning += this.buf.slice(0, this.buf.length - keep);
        this.buf = this.buf.slice(this.buf.length - keep);
        break;
      }
      if (this.state === 'after-close') {
        this.buf = this.buf.trimStart();
        if (this.buf.length === 0 && !end) break;
        this.state = 'content';
        continue;
      }
      content += this.take();
      break;
    }
    return { reasoning, content };
  }

  /** Index of the first `endsAt` marker in the buffer before `limit` (−1: none; limit −1: anywhere). */
  private firstEnd(limit: number): number {
    let first = -1;
    for (const t of this.endsAt) {
      const k = this.buf.indexOf(t);
      if (k >= 0 && (limit < 0 || k < limit) && (first < 0 || k < first)) first = k;
    }
    return first;
  }

  private take(): string {
    const s = this.buf;
    this.buf = '';
    return s;
  }

  private harmony(end: boolean): SplitText {
    let reasoning = '';
    let content = '';
    const emit = (s: string): void => {
      if (this.channel === 'analysis') reasoning += s;
      else content += s;
    };
    for (;;) {
      if (this.state === 'lead') {
        // Held while it may still be a recipient (` to=functions.f`) ending where a marker starts.
        const lead = /^\s*(?:t(?:o(?:=[^<\s]*)?)?)?/.exec(this.buf)![0];
        if (lead.length === this.buf.length && !end) break;
        const rest = this.buf.slice(lead.length);
        if (/^\s*to=/.test(lead) && (rest.startsWith('<|') || (rest === '<' && !end))) {
          if (rest === '<') break;
          this.recipient = true;
          this.buf = rest;
        }
        this.state = 'body';
        continue;
      }
      if (this.state === 'role') {
        // `<|start|>assistant` (or `assistant to=functions.f`) precedes the next channel header: drop the role name.
        const i = this.buf.indexOf('<|');
        if (i < 0) {
          if (end) this.buf = ''; // else held: the role header (and its recipient) may continue
          break;
        }
        this.recipient = /to=/.test(this.buf.slice(0, i));
        this.buf = this.buf.slice(i);
        this.state = 'body';
        continue;
      }
      if (this.state === 'header') {
        const i = this.buf.indexOf('<|message|>');
        if (i < 0) {
          if (end) this.buf = '';
          break;
        }
        const header = this.buf.slice(0, i);
        const call = this.recipient || /to=/.test(header);
        // A message with a recipient is a call whatever its channel (gpt-oss also addresses tools from `analysis`).
        this.channel = call ? 'call' : /^\s*analysis/.test(header) ? 'analysis' : 'final';
        this.recipient = false;
        this.buf = this.buf.slice(i + '<|message|>'.length);
        this.state = 'body';
        continue;
      }
      // body: text up to the next marker
      const m = /<\|(channel|end|start|return|call)\|>/.exec(this.buf);
      if (m) {
        if (this.channel !== 'call') emit(this.buf.slice(0, m.index));
        this.buf = this.buf.slice(m.index + m[0].length);
        if (m[1] === 'channel') this.state = 'header';
        else if (m[1] === 'start') this.state = 'role';
        continue;
      }
      let keep = 0;
      if (!end) {
        const lt = this.buf.lastIndexOf('<|');
        if (lt >= 0 && !this.buf.slice(lt).includes('|>')) keep = this.buf.length - lt;
        else if (this.buf.endsWith('<')) keep = 1;
      }
      if (this.channel !== 'call') emit(this.buf.slice(0, this.buf.length - keep));
      this.buf = this.buf.slice(this.buf.length - keep);
      break;
    }
    return { reasoning, content };
  }
}

/** Splits a whole output at once. */
export function splitReasoning(
  format: ReasoningFormat,
  text: string,
  startInside = false,
  endsAt: readonly string[] = [],
): SplitText {
  const s = new ReasoningSplitter(format, startInside, endsAt);
  const a = s.push(text);
  const b = s.flush();
  return { reasoning: a.reasoning + b.reasoning, content: a.content + b.content };
}
