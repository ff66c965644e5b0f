/**
 * Turns a chat model's raw output into the OpenAI answer: reasoning apart (`reasoning_content`), tool calls parsed
 * from the model's native syntax (`tool_calls`, `finish_reason: 'tool_calls'`), the rest as `content` — for a whole
 * answer, or delta by delta for a stream (answer text is held back from the moment a call starts; each call goes out
 * as `delta.tool_calls` fragments while it is written — id and name first, then its arguments piece by piece — for
 * the JSON-argument syntaxes, whole when generation ends for the others; see tool-call-stream.ts).
 */

import type { ReasoningFormat } from '../output/reasoning-format.js';
import { ReasoningSplitter, splitReasoning, type SplitText } from '../output/reasoning-splitter.js';
import type { ToolCallFormat } from '../tools/tool-call-format.js';
import type { ParsedCall } from '../tools/tool-call-parse.js';
import type { ToolSpec } from '../tools/tool-spec.js';
import type { ToolStreamGate } from '../tools/tool-stream-gate.js';
import type { ChatToolCall, ChatToolCallDelta } from './types.js';

/** How a chat request's output is read. */
export interface AnswerShape {
  readonly reasoning?: { readonly format: ReasoningFormat; readonly startInside: boolean };
  readonly tools?: { readonly format: ToolCallFormat; readonly spec: ToolSpec; readonly read: ToolCallReader };
}

/** The call parsers (a chunk of their own, see tool-call-reader.ts). */
export type ToolCallReader = typeof import('../tools/tool-call-reader.js');

/** Loads the call parsers; a request with `tools` awaits it before its answer is read. */
export function loadToolCallReader(): Promise<ToolCallReader> {
  return import('../tools/tool-call-reader.js');
}

/** A streamed delta: reasoning, answer text and call fragments that may be shown now. */
export interface AnswerDelta extends SplitText {
  readonly calls: ChatToolCallDelta[];
}

/** What the stream's end adds. */
export interface AnswerEnd extends SplitText {
  /** Every call of the answer, whole (for `message.tool_calls` and `finish_reason`). */
  readonly calls: ChatToolCall[];
  /** Fragments of the calls not streamed yet (a stream's last call fragments). */
  readonly callDeltas: ChatToolCallDelta[];
}

function newCallId(): string {
  let s = '';
  const abc = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  for (let i = 0; i < 24; i++) s += abc[Math.floor(Math.random() * abc.length)];
  return `call_${s}`;
}

function toCalls(calls: readonly ParsedCall[], ids: readonly string[] = []): ChatToolCall[] {
  return calls.map((c, i) => ({
    id: ids[i] ?? c.id ?? newCallId(),
    type: 'function',
    function: { name: c.name, arguments: c.arguments },
  }));
}

/**
 * Where a tool call ends the reasoning: Qwen3-Coder / Qwen3.5 calls may open inside an unclosed `<think>` (llama.cpp's
 * qwen3-coder parser ends the reasoning at `</think>` or `<tool_call>`).
 */
function reasoningEnds(shape: AnswerShape): readonly string[] {
  return shape.tools?.format === 'qwen3-coder' ? ['<tool_call>'] : [];
}

/**
 * Gemma 4: `text` up to the end of its last closed call, or '' when none is closed yet (its parser also reads an
 * unclosed call, whose name and values may still grow). LFM2 calls parse only once their parentheses close.
 */
function closedPart(text: string, format: ToolCallFormat): string {
  if (format !== 'gemma4') return text;
  const close = '<tool_call|>';
  const at = text.lastIndexOf(close);
  return at < 0 ? '' : text.slice(0, at + close.length);
}

/** A call already announced in a stream: its id and name, and the arguments sent so far. */
interface StreamedCall {
  readonly id: string;
  readonly name: string;
  args: string;
}

/** Reads one output. */
export class ChatAnswer {
  private readonly shape: AnswerShape;
  private readonly splitter: ReasoningSplitter | null;
  private readonly gate: ToolStreamGate | null;
  private raw = '';
  /** Answer characters already shown. */
  private emitted = 0;
  /** Calls whose fragments went out, by index. */
  private readonly streamed: StreamedCall[] = [];

  constructor(shape: AnswerShape) {
    this.shape = shape;
    this.splitter = shape.reasoning
      ? new ReasoningSplitter(shape.reasoning.format, shape.reasoning.startInside, reasoningEnds(shape))
      : null;
    this.gate = shape.tools
      ? new shape.tools.read.ToolStreamGate(shape.tools.read.callTriggers(shape.tools.format))
      : null;
  }

  /** The whole answer at once. */
  static whole(shape: AnswerShape, text: string): AnswerEnd {
    const split = shape.reasoning
      ? splitReasoning(shape.reasoning.format, text, shape.reasoning.startInside, reasoningEnds(shape))
      : { reasoning: '', content: text };
    if (!shape.tools) return { ...split, calls: [], callDeltas: [] };
    const { format, spec, read } = shape.tools;
    const parsed = read.parseToolCalls(format, format === 'harmony' ? text : split.content, spec.tools);
    const calls = spec.parallel ? parsed.calls : parsed.calls.slice(0, 1);
    return {
      reasoning: split.reasoning,
      content: format === 'harmony' ? split.content : parsed.content,
      calls: toCalls(calls),
      callDeltas: [],
    };
  }

  /** The next delta: reasoning, the answer text that may be shown now and the call fragments written so far. */
  push(text: string): AnswerDelta {
    this.raw += text;
    const s = this.splitter ? this.splitter.push(text) : { reasoning: '', content: text };
    const content = this.gate ? this.gate.push(s.content) : s.content;
    this.emitted += content.length;
    return { reasoning: s.reasoning, content, calls: this.callFragments() };
  }

  /** Fragments of the calls written since the last push (JSON-argument syntaxes, once a call started). */
  private callFragments(): ChatToolCallDelta[] {
    const tools = this.shape.tools;
    if (!tools || !this.gate) return [];
    const harmony = tools.format === 'harmony';
    if (harmony ? !this.raw.includes(' to=functions.') : !this.gate.calling) return [];
    const text = harmony ? this.raw : this.gate.text;
    // Syntaxes not read while written (lfm2, gemma4): each call whole, once complete (`end()` sends the rest).
    const partial =
      tools.read.partialToolCalls(tools.format, text, tools.spec.tools) ??
      tools.read
        .parseToolCalls(tools.format, closedPart(text, tools.format), tools.spec.tools)
        .calls.map((c) => ({ ...c, args: c.arguments }));
    const out: ChatToolCallDelta[] = [];
    const calls = tools.spec.parallel ? partial : partial.slice(0, 1);
    for (let index = 0; index < calls.length; index++) {
      const c = calls[index]!;
      const seen = this.streamed[index];
      if (!seen) {
        const id = c.id ?? newCallId();
        this.streamed.push({ id, name: c.name, args: c.args });
        out.push({ index, id, type: 'function', function: { name: c.name, arguments: c.args } });
      } else if (c.args.length > seen.args.length && c.args.startsWith(seen.args)) {
        out.push({ index, function: { arguments: c.args.slice(seen.args.length) } });
        seen.args = c.args;
      }
    }
    return out;
  }

  /** The rest of each call after what was streamed (whole for calls not announced yet). */
  private finalFragments(calls: readonly ChatToolCall[]): ChatToolCallDelta[] {
    const out: ChatToolCallDelta[] = [];
    calls.forEach((c, index) => {
      const seen = this.streamed[index];
      if (!seen) out.push({ index, ...c });
      else if (c.function.arguments.startsWith(seen.args) && c.function.arguments.length > seen.args.length)
        out.push({ index, function: { arguments: c.function.arguments.slice(seen.args.length) } });
    });
    return out;
  }

  /** The end of the output: what was held back, and the calls. */
  end(): AnswerEnd {
    const s = this.splitter ? this.splitter.flush() : { reasoning: '', content: '' };
    if (!this.gate || !this.shape.tools) return { ...s, calls: [], callDeltas: [] };
    const shown = this.gate.push(s.content);
    this.emitted += shown.length;
    const { format, spec, read } = this.shape.tools;
    if (!this.gate.calling)
      return { reasoning: s.reasoning, content: shown + this.gate.flush(), calls: [], callDeltas: [] };
    // Harmony call bodies never reach the answer text (the splitter drops them): read calls from the raw output.
    const source = format === 'harmony' ? this.raw : this.gate.text;
    const parsed = read.parseToolCalls(format, source, spec.tools);
    if (parsed.calls.length === 0) {
      // Not a well-formed call after all: release the held text as answer.
      return { reasoning: s.reasoning, content: shown + this.gate.text.slice(this.emitted), calls: [], callDeltas: [] };
    }
    const parsedCalls = spec.parallel ? parsed.calls : parsed.calls.slice(0, 1);
    const calls = toCalls(
      parsedCalls,
      this.streamed.map((c) => c.id),
    );
    return { reasoning: s.reasoning, content: shown, calls, callDeltas: this.finalFragments(calls) };
  }
}
