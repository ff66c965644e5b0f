/**
 * The AI SDK provider (`webgguf/ai-sdk`) driven by the real `ai` package in Node on stories260K: generateText,
 * streamText (the streamed text equals the whole), generateObject / streamObject with a JSON schema (the object
 * validates), and a forced tool call executed by the SDK — whole, and streamed (its input arrives as several
 * tool-input deltas that concatenate to the call's input).
 */
import { generateObject, generateText, jsonSchema, streamObject, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGGUF } from '../../../src/ai-sdk/index.js';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { sharedPath } from '../../helpers/shared-path.js';

describe('AI SDK provider on stories260K', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({
      model: sharedPath('models', 'stories260K.gguf'),
      backend: 'cpu',
      contextLength: 1024,
    });
  });
  afterAll(() => engine.unload());

  it('generateText and streamText', async () => {
    const model = createWebGGUF(engine)();
    const g = await generateText({ model, prompt: 'Once upon a time', temperature: 0, maxOutputTokens: 16 });
    expect(g.text.length).toBeGreaterThan(0);
    expect(g.usage.outputTokens).toBeGreaterThan(0);
    const s = streamText({ model, prompt: 'Once upon a time', temperature: 0, maxOutputTokens: 16 });
    let text = '';
    for await (const t of s.textStream) text += t;
    expect(text).toBe(g.text);
    expect(await s.finishReason).toBe(g.finishReason);
  });

  it('generateObject and streamObject with a JSON schema', async () => {
    const model = createWebGGUF(engine)();
    const schema = jsonSchema<{ name: string; happy: boolean }>({
      type: 'object',
      properties: { name: { type: 'string', maxLength: 12 }, happy: { type: 'boolean' } },
      required: ['name', 'happy'],
      additionalProperties: false,
    });
    const o = await generateObject({ model, schema, prompt: 'Tom', temperature: 0, maxOutputTokens: 60 });
    expect(typeof o.object.name).toBe('string');
    expect(typeof o.object.happy).toBe('boolean');
    const so = streamObject({ model, schema, prompt: 'Tom', temperature: 0, maxOutputTokens: 60 });
    for await (const partial of so.partialObjectStream) void partial;
    expect(await so.object).toEqual(o.object);
  });

  it('a forced tool call is made and executed by the SDK', async () => {
    const model = createWebGGUF(engine)();
    const seen: unknown[] = [];
    const r = await generateText({
      model,
      prompt: 'Once upon a time',
      temperature: 0,
      maxOutputTokens: 80,
      toolChoice: 'required',
      tools: {
        pick: tool({
          description: 'Pick a color',
          inputSchema: jsonSchema<{ color: 'red' | 'blue' }>({
            type: 'object',
            properties: { color: { enum: ['red', 'blue'] } },
            required: ['color'],
            additionalProperties: false,
          }),
          execute: async (input) => {
            seen.push(input);
            return { ok: true };
          },
        }),
      },
    });
    expect(r.toolCalls).toHaveLength(1);
    expect(['red', 'blue']).toContain((r.toolCalls[0].input as { color: string }).color);
    expect(seen).toHaveLength(1);
    expect(r.toolResults[0].output).toEqual({ ok: true });

    const s = streamText({
      model,
      prompt: 'Once upon a time',
      temperature: 0,
      maxOutputTokens: 80,
      toolChoice: 'required',
      tools: {
        pick: tool({
          inputSchema: jsonSchema<{ color: 'red' | 'blue' }>({
            type: 'object',
            properties: { color: { enum: ['red', 'blue'] } },
            required: ['color'],
            additionalProperties: false,
          }),
          execute: async () => ({ ok: true }),
        }),
      },
    });
    let input = '';
    let deltas = 0;
    const calls: unknown[] = [];
    for await (const part of s.fullStream) {
      if (part.type === 'tool-input-delta') {
        input += part.delta;
        deltas++;
      }
      if (part.type === 'tool-call') calls.push(part.input);
    }
    expect(deltas).toBeGreaterThan(1);
    expect(calls).toEqual([r.toolCalls[0].input]);
    expect(JSON.parse(input)).toEqual(r.toolCalls[0].input);
  });
});
