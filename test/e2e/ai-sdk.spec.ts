/**
 * The AI SDK (`ai`) in real Chromium with webgguf's provider over a worker engine (script-tag bundle): streamText,
 * generateObject with a JSON schema, and a forced tool call executed by the SDK, on stories260K.
 */

import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { SHARED_DIR } from '../helpers/shared-path.js';
import { REPO_ROOT, buildPageBundle, requireIifeDir } from './support/page-setup.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const BUNDLE_DIR = resolve(REPO_ROOT, 'test-results/e2e-bundles/ai-sdk');
let server: StaticServer;

test.beforeAll(async () => {
  const IIFE_DIR = requireIifeDir();
  await buildPageBundle('test/e2e/pages/ai-sdk-entry.ts', BUNDLE_DIR);
  server = await startStaticServer({
    '/cdn/webgguf/': IIFE_DIR,
    '/app/': BUNDLE_DIR,
    '/pages/': resolve(REPO_ROOT, 'test/e2e/pages'),
    '/shared/': SHARED_DIR,
  });
});
test.afterAll(async () => {
  await server?.close();
});

test('streamText, generateObject and a tool call with the AI SDK over a worker engine', async ({ page }) => {
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  await page.goto(server.url('/pages/ai-sdk.html'));
  await expect(page.locator('#status')).toHaveText('ready', { timeout: 60_000 });
  const out = await page.evaluate(async () => {
    type Any = (...a: unknown[]) => unknown;
    const w = window as unknown as {
      WebGGUF: { createWorkerEngine(o: object): Promise<{ unload(): Promise<void> }> };
      aiTest: Record<string, Any>;
    };
    const { generateObject, jsonSchema, streamText, generateText, tool, createWebGGUF } = w.aiTest;
    const engine = await w.WebGGUF.createWorkerEngine({
      model: '/shared/models/stories260K.gguf',
      backend: 'wasm',
      contextLength: 1024,
    });
    const model = (createWebGGUF(engine) as Any)();
    const s = streamText({ model, prompt: 'Once upon a time', temperature: 0, maxOutputTokens: 12 }) as {
      textStream: AsyncIterable<string>;
    };
    let text = '';
    for await (const t of s.textStream) text += t;
    const schema = jsonSchema({
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
      additionalProperties: false,
    });
    const o = (await generateObject({ model, schema, prompt: 'Tom', temperature: 0, maxOutputTokens: 40 })) as {
      object: { ok: unknown };
    };
    let executed = 0;
    const pick = tool({
      inputSchema: jsonSchema({
        type: 'object',
        properties: { color: { enum: ['red', 'blue'] } },
        required: ['color'],
        additionalProperties: false,
      }),
      execute: async () => {
        executed++;
        return 'done';
      },
    });
    const g = (await generateText({
      model,
      prompt: 'Tom',
      temperature: 0,
      maxOutputTokens: 80,
      toolChoice: 'required',
      tools: { pick },
    })) as { toolCalls: { toolName: string; input: { color: string } }[] };
    await engine.unload();
    return {
      text,
      ok: o.object.ok,
      call: g.toolCalls[0] ? { name: g.toolCalls[0].toolName, color: g.toolCalls[0].input.color } : null,
      executed,
    };
  });
  console.log(JSON.stringify(out));
  expect(out.text.length).toBeGreaterThan(0);
  expect(typeof out.ok).toBe('boolean');
  expect(out.call?.name).toBe('pick');
  expect(['red', 'blue']).toContain(out.call?.color);
  expect(out.executed).toBe(1);
});
