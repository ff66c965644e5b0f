/**
 * llama.cpp's chat-parser examples (tests/test-chat.cpp, facts restated here) for the templates of its corpus whose
 * tool-call syntax we read: the model output, read whole and streamed split at every boundary (two pieces at each
 * position, and one character at a time), gives llama.cpp's expected message — reasoning, content, calls (names,
 * arguments as JSON values, ids the model wrote). The template (test/fixtures/templates/corpus) decides the syntax
 * and the reasoning format, and its rendered prompt whether the output starts inside the reasoning, as in the engine.
 * Content and reasoning compare with surrounding whitespace stripped, as llama.cpp's tests compare them.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type AnswerShape, ChatAnswer } from '../../../src/api/chat-answer.js';
import { compileTemplate, renderChat, templateCaps, templateSupportsThinking } from '../../../src/chat/index.js';
import { detectReasoningFormat, startsInsideReasoning } from '../../../src/output/reasoning-format.js';
import * as read from '../../../src/tools/tool-call-reader.js';
import { type Call, EXAMPLES, type Example, TOOLS } from './chat-examples-data.js';

const corpus = new URL('../../fixtures/templates/corpus/', import.meta.url);
function shapeOf(ex: Example): AnswerShape {
  const text = readFileSync(new URL(`${ex.template}.jinja`, corpus), 'utf8');
  const compiled = compileTemplate(text);
  const format = detectReasoningFormat(text, templateSupportsThinking(compiled));
  const tools = (ex.tools ?? []).map((n) => TOOLS[n]!);
  const raw = tools.map((t) => ({ type: 'function', function: t }));
  const prompt = renderChat([{ role: 'user', content: 'Hi' }], {
    template: text,
    ...(ex.thinking !== undefined ? { chatTemplateKwargs: { enable_thinking: ex.thinking } } : {}),
    ...(tools.length > 0 ? { tools: raw } : {}),
  }).prompt;
  expect(templateCaps(compiled).supportsTools || tools.length === 0).toBe(true);
  return {
    ...(format.kind === 'none' ? {} : { reasoning: { format, startInside: startsInsideReasoning(format, prompt) } }),
    ...(tools.length > 0
      ? {
          tools: {
            format: read.detectToolCallFormat(text),
            spec: { tools, raw, choice: 'auto' as const, parallel: true },
            read,
          },
        }
      : {}),
  };
}

interface Message {
  content: string;
  reasoning: string;
  calls: Call[];
}

function whole(shape: AnswerShape, output: string): Message {
  const r = ChatAnswer.whole(shape, output);
  return {
    content: r.content.trim(),
    reasoning: r.reasoning.trim(),
    calls: r.calls.map((c) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) as unknown })),
  };
}

/** The message a stream of `pieces` adds up to (deltas concatenated as a client does). */
function streamed(shape: AnswerShape, pieces: readonly string[]): Message {
  const a = new ChatAnswer(shape);
  let content = '';
  let reasoning = '';
  const calls: { name: string; args: string }[] = [];
  const add = (deltas: readonly { index: number; function?: { name?: string; arguments?: string } }[]) => {
    for (const d of deltas) {
      calls[d.index] ??= { name: '', args: '' };
      calls[d.index]!.name += d.function?.name ?? '';
      calls[d.index]!.args += d.function?.arguments ?? '';
    }
  };
  for (const p of pieces) {
    const d = a.push(p);
    content += d.content;
    reasoning += d.reasoning;
    add(d.calls);
  }
  const e = a.end();
  content += e.content;
  reasoning += e.reasoning;
  add(e.callDeltas);
  return {
    content: content.trim(),
    reasoning: reasoning.trim(),
    calls: calls.map((c) => ({ name: c.name, args: JSON.parse(c.args) as unknown })),
  };
}

function expected(ex: Example, withIds: boolean): Message {
  return {
    content: ex.content ?? '',
    reasoning: ex.reasoning ?? '',
    calls: (ex.calls ?? []).map((c) => ({ name: c.name, args: c.args, ...(withIds && c.id ? { id: c.id } : {}) })),
  };
}

describe("llama.cpp's chat-parser examples", () => {
  EXAMPLES.forEach((ex, n) => {
    it(`#${n} ${ex.template}${ex.thinking !== undefined ? ` (thinking ${ex.thinking})` : ''}: ${JSON.stringify(ex.output.slice(0, 50))}`, () => {
      const shape = shapeOf(ex);
      expect(whole(shape, ex.output)).toEqual(expected(ex, false));
      const ids = ChatAnswer.whole(shape, ex.output).calls.map((c) => c.id);
      (ex.calls ?? []).forEach((c, i) => {
        if (c.id) expect(ids[i]).toBe(c.id);
      });
      const want = expected(ex, false);
      const s = ex.output;
      expect(streamed(shape, [...s])).toEqual(want);
      for (let k = 1; k < s.length; k++)
        expect(streamed(shape, [s.slice(0, k), s.slice(k)]), `split at ${k}`).toEqual(want);
    });
  });
});
