/**
 * Constrained decoding, tool calls and logprobs in real Chromium through the script-tag bundle's worker engine:
 * the worker fetches the lazily loaded grammar engine (@mlc-ai/web-xgrammar) from next to the script and
 * evaluates it; a JSON-schema answer validates, a GBNF grammar holds, a forced tool call's arguments parse, and the
 * in-thread engine (main thread) loads it too.
 */

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { SHARED_DIR } from '../helpers/shared-path.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const IIFE_DIR = resolve(REPO_ROOT, 'dist/iife');
let server: StaticServer;

test.beforeAll(async () => {
  if (!existsSync(resolve(IIFE_DIR, 'webgguf.js')))
    throw new Error(`${IIFE_DIR}/webgguf.js is missing: run \`npm run build\` first`);
  server = await startStaticServer({
    '/cdn/webgguf/': IIFE_DIR,
    '/pages/': resolve(REPO_ROOT, 'test/e2e/support'),
    '/shared/': SHARED_DIR,
  });
});
test.afterAll(async () => {
  await server?.close();
});

test('JSON schema, grammar, forced tool call and logprobs through the worker and in-thread', async ({ page }) => {
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  const q = new URLSearchParams({
    model: '/shared/models/stories260K.gguf',
    backend: 'wasm',
    prompt: 'Once',
    max_tokens: '4',
  });
  await page.goto(server.url(`/pages/iife.html?${q}`));
  await expect(page.locator('#status')).toHaveText('done', { timeout: 180_000 });
  const out = await page.evaluate(async () => {
    type Create = (r: object) => Promise<{
      choices: {
        message: { content: string; tool_calls?: { function: { name: string; arguments: string } }[] };
        finish_reason: string;
        logprobs: { content: unknown[] } | null;
      }[];
    }>;
    const w = window as unknown as {
      engine: { chat: { completions: { create: Create } } };
      WebGGUF: {
        createEngine(o: object): Promise<{ chat: { completions: { create: Create } }; unload(): Promise<void> }>;
      };
    };
    const schema = {
      type: 'object',
      properties: { ok: { type: 'boolean' }, n: { type: 'integer', minimum: 0, maximum: 9 } },
      required: ['ok', 'n'],
      additionalProperties: false,
    };
    const messages = [{ role: 'user', content: 'Tom' }];
    const json = await w.engine.chat.completions.create({
      messages,
      temperature: 0,
      max_tokens: 60,
      logprobs: true,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    const grammar = await w.engine.chat.completions.create({
      messages,
      temperature: 0,
      max_tokens: 20,
      grammar: 'root ::= "yes" | "no"',
    });
    const tool = {
      type: 'function',
      function: {
        name: 'pick',
        parameters: { type: 'object', properties: { color: { enum: ['red', 'blue'] } }, required: ['color'] },
      },
    };
    const call = await w.engine.chat.completions.create({
      messages,
      temperature: 0,
      max_tokens: 80,
      tools: [tool],
      tool_choice: 'required',
    });
    const local = await w.WebGGUF.createEngine({
      model: '/shared/models/stories260K.gguf',
      backend: 'wasm',
      contextLength: 256,
    });
    const inThread = await local.chat.completions.create({
      messages,
      temperature: 0,
      max_tokens: 20,
      grammar: 'root ::= "yes" | "no"',
    });
    await local.unload();
    return {
      json: json.choices[0].message.content,
      jsonFinish: json.choices[0].finish_reason,
      logprobs: json.choices[0].logprobs?.content.length ?? 0,
      grammar: grammar.choices[0].message.content,
      call: call.choices[0].message.tool_calls?.[0]?.function ?? null,
      callFinish: call.choices[0].finish_reason,
      inThread: inThread.choices[0].message.content,
    };
  });
  console.log(JSON.stringify(out));
  if (out.jsonFinish === 'stop') {
    const v = JSON.parse(out.json) as { ok: unknown; n: unknown };
    expect(typeof v.ok).toBe('boolean');
    expect(Number.isInteger(v.n)).toBe(true);
  }
  expect(out.logprobs).toBeGreaterThan(0);
  expect(['yes', 'no']).toContain(out.grammar);
  expect(['yes', 'no']).toContain(out.inThread);
  expect(out.callFinish).toBe('tool_calls');
  expect(out.call?.name).toBe('pick');
  expect(['red', 'blue']).toContain((JSON.parse(out.call!.arguments) as { color: string }).color);
  // The grammar engine came from next to the script (the worker's copy and the main thread's).
  expect(
    server.log.some((r) => /\/cdn\/webgguf\/(assets\/)?index(-[\w-]+)?\.js$/.test(r.path) && r.status === 200),
  ).toBe(true);
});
