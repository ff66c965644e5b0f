/**
 * The new request features through the worker bridge (a MessageChannel standing in for the Worker, as in
 * worker-bridge.test.ts): a grammar-constrained answer, a tool call (generic tool prompt + Hermes syntax),
 * logprobs, and the AI SDK provider over the WorkerEngine.
 */
import { generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import { createWebGGUF } from '../../../src/ai-sdk/index.js';
import type { Engine, EngineOptions } from '../../../src/api/engine.js';
import { isLlmError } from '../../../src/errors.js';
import { connectWorkerEngine } from '../../../src/worker/client.js';
import { createWorkerApi } from '../../../src/worker/worker-api.js';
import { createFakeTransformer, spellScript } from '../engine/fake-model.js';
import { createFakeEngine, useChannels } from '../worker/worker-harness.js';

const channels = useChannels();

async function connect(text: string) {
  const factory = (o: EngineOptions): Promise<Engine> =>
    createFakeEngine(o.model, createFakeTransformer({ script: spellScript(text), contextLength: 2048 }), 2048, 1);
  return connectWorkerEngine(channels.expose(createWorkerApi(factory)), { model: 'model.gguf' });
}

describe('structured features through the worker', () => {
  it('grammar, logprobs and a bad grammar error cross the bridge', async () => {
    const engine = await connect('yes');
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'ok?' }],
      grammar: 'root ::= "yes" | "no"',
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
    });
    expect(r.choices[0].message.content).toBe('yes');
    expect(r.choices[0].logprobs!.content!.length).toBe(3);
    const e = await engine.chat.completions
      .create({ messages: [{ role: 'user', content: 'x' }], grammar: 'root ::= ' })
      .catch((x: unknown) => x);
    expect(isLlmError(e, 'invalid-request') && e.details?.field).toBe('grammar');
    await engine.unload();
  });

  it('a tool call (generic prompt) and the AI SDK over the WorkerEngine', async () => {
    const engine = await connect('<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>');
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'f',
          parameters: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] },
        },
      },
    ];
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'call f' }],
      tools,
      temperature: 0,
    });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    expect(JSON.parse(r.choices[0].message.tool_calls![0].function.arguments)).toEqual({ x: 1 });
    const g = await generateText({
      model: createWebGGUF(engine)(),
      prompt: 'call f',
      temperature: 0,
      tools: {},
      maxOutputTokens: 100,
    });
    expect(g.text).toContain('<tool_call>'); // no tools given: the text is plain
    await engine.unload();
  });
});
