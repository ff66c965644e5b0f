/**
 * Turns a chat model's raw output into the OpenAI answer: reasoning apart (`reasoning_content`), tool calls parsed
 * from the model's native syntax (`tool_calls`, `finish_reason: 'tool_calls'`), the rest as `content` — for a whole
 * answer, or delta by delta for a stream (answer text is held back from the moment a call starts; the calls are
 * emitted, each as one `delta.tool_calls` entry, when generation ends).
 */

import type { ReasoningFormat } from '../output/reasoning-format.js';
import { ReasoningSplitter, splitReasoning, type SplitText } from '../output/reasoning-splitter.js';
import { callTriggers, type ToolCallFormat } from '../tools/tool-call-format.js';
import { parseToolCalls, type ParsedCall } from '../tools/tool-call-parse.js';
import type { ToolSpec } from '../tools/tool-spec.js';
import { ToolStreamGate } from '../tools/tool-stream-gate.js';
import type { ChatToolCall } from './types.js';

/** How a chat request's output is read. */
export interface AnswerShape {
  readonly reasoning?: { readonly format: ReasoningFormat; readonly startInside: boolean };
  readonly tools?: { readonly format: ToolCallFormat; readonly spec: ToolSpec };
}

/** What the stream's end adds. */
export interface AnswerEnd extends SplitText {
  readonly calls: ChatToolCall[];
}

function newCallId(): string {
  let s = '';
  const abc = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  for (let i = 0; i < 24; i++) s += abc[Math.floor(Math.random() * abc.length)];
  return `call_${s}`;
}

function toCalls(calls: readonly ParsedCall[]): ChatToolCall[] {
  return calls.map((c) => ({
    id: c.id ?? newCallId(),
    type: 'function',
    function: { name: c.name, arguments: c.arguments },
  }));
}

/** Reads one output. */
export class ChatAnswer {
  private readonly shape: AnswerShape;
  private readonly splitter: ReasoningSplitter | null;
  private readonly gate: ToolStreamGate | null;
  private raw = '';
  /** Answer characters already shown. */
  private emitted = 0;

  constructor(shape: AnswerShape) {
    this.shape = shape;
    this.splitter = shape.reasoning ? new ReasoningSplitter(shape.reasoning.format, shape.reasoning.startInside) : null;
    this.gate = shape.tools ? new ToolStreamGate(callTriggers(shape.tools.format)) : null;
  }

  /** The whole answer at once. */
  static whole(shape: AnswerShape, text: string): AnswerEnd {
    const split = shape.reasoning
      ? splitReasoning(shape.reasoning.format, text, shape.reasoning.startInside)
      : { reasoning: '', content: text };
    if (!shape.tools) return { ...split, calls: [] };
    const { format, spec } = shape.tools;
    const parsed = parseToolCalls(format, format === 'harmony' ? text : split.content, spec.tools);
    const calls = spec.parallel ? parsed.calls : parsed.calls.slice(0, 1);
    return {
      reasoning: split.reasoning,
      content: format === 'harmony' ? split.content : parsed.content,
      calls: toCalls(calls),
    };
  }

  /** The next delta: reasoning and the answer text that may be shown now. */
  push(text: string): SplitText {
    this.raw += text;
    const s = this.splitter ? this.splitter.push(text) : { reasoning: '', content: text };
    const content = this.gate ? this.gate.push(s.content) : s.content;
    this.emitted += content.length;
    return { reasoning: s.reasoning, content };
  }

  /** The end of the output: what was held back, and the calls. */
  end(): AnswerEnd {
    const s = this.splitter ? this.splitter.flush() : { reasoning: '', content: '' };
    if (!this.gate || !this.shape.tools) return { ...s, calls: [] };
    const shown = this.gate.push(s.content);
    this.emitted += shown.length;
    const { format, spec } = this.shape.tools;
    if (!this.gate.calling) return { reasoning: s.reasoning, content: shown + this.gate.flush(), calls: [] };
    // Harmony call bodies never reach the answer text (the splitter drops them): read calls from the raw output.
    const source = format === 'harmony' ? this.raw : this.gate.text;
    const parsed = parseToolCalls(format, source, spec.tools);
    if (parsed.calls.length === 0) {
      // Not a well-formed call after all: release the held text as answer.
      return { reasoning: s.reasoning, content: shown + this.gate.text.slice(this.emitted), calls: [] };
    }
    const calls = spec.parallel ? parsed.calls : parsed.calls.slice(0, 1);
    return { reasoning: s.reasoning, content: shown, calls: toCalls(calls) };
  }
}
