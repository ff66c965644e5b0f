/**
 * Issue #20, persisted prompt cache: the system prompt (automatically) and every cached prefix (`saveCache()`) are
 * stored with their KV rows and restored by the next engine of the same model, whose output is then identical to a
 * cold run while the restored prefix is not prefilled again; entries of another model, template or with damaged rows
 * are never served; the folder store survives a "restart"; entries are listed and deleted through the store API.
 */

import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine, EngineOptions } from '../../../src/api/engine.js';
import type { ChatMessage } from '../../../src/api/types.js';
import type { KvType } from '../../../src/backend/kv-type.js';
import {
  type PromptCacheStore,
  deletePromptCache,
  listPromptCaches,
  memoryPromptCacheStore,
} from '../../../src/io/prompt-cache-store.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const REF = JSON.parse(readFileSync(sharedPath('models', 'stories260K.reference.json'), 'utf8')) as {
  prompt: string;
  greedy_kv_f32: { text: string };
};
const TEMPLATE = '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:';
const SYSTEM =
  'Once upon a time there was a little girl named Lily who loved to play in the park with her big red ball and her dog.';
const messages = (user: string): ChatMessage[] => [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: user },
];

let dir: string;
const engines: Engine[] = [];

async function open(options: Partial<EngineOptions>): Promise<Engine> {
  const e = await createEngine({
    model: MODEL,
    backend: 'cpu',
    contextLength: 256,
    warmup: false,
    chatTemplate: TEMPLATE,
    ...options,
  });
  engines.push(e);
  return e;
}

/** Greedy continuation of the long prompt on a cold engine of `backend` (no persisted cache). */
const LONG = `${SYSTEM} One day she found a`;
const coldLong = new Map<string, string>();
async function coldText(backend: 'cpu' | 'wasm', kvType?: KvType): Promise<string> {
  const key = `${backend}:${kvType ?? 'default'}`;
  if (!coldLong.has(key)) {
    const e = await open({ backend, threads: 1, persistedCache: false, ...(kvType ? { kvType } : {}) });
    coldLong.set(key, (await e.completions.create({ prompt: LONG, temperature: 0, max_tokens: 40 })).choices[0].text);
  }
  return coldLong.get(key) ?? '';
}

async function chat(e: Engine, user: string): Promise<{ text: string; cached: number }> {
  const r = await e.chat.completions.create({ messages: messages(user), temperature: 0, max_tokens: 12 });
  return { text: r.choices[0].message.content ?? '', cached: r.usage?.prompt_tokens_details?.cached_tokens ?? 0 };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'webgguf-pcache-'));
});
afterAll(async () => {
  await Promise.all(engines.map((e) => e.unload()));
  rmSync(dir, { recursive: true, force: true });
});

describe('persisted prompt cache', () => {
  it('the system prompt is persisted automatically and restored by the next engine: same output, prefix not prefilled', async () => {
    const store = memoryPromptCacheStore();
    const cold = await chat(await open({ persistedCache: false }), 'Tell me a story.');
    const a = await open({ persistedCache: { store } });
    expect((await chat(a, 'Hi.')).cached).toBe(0);
    const [record] = await listPromptCaches({ store });
    expect(record).toBeDefined();
    expect(record.tokens.length).toBeGreaterThan(20);
    const b = await open({ persistedCache: { store } });
    const warm = await chat(b, 'Tell me a story.');
    expect(warm.text).toBe(cold.text);
    expect(warm.cached).toBe(record.tokens.length);
  });

  it('saveCache() persists cached prefixes; greedy output after a restore equals llama.cpp and a cold run', async () => {
    const store = memoryPromptCacheStore();
    const a = await open({ persistedCache: { store, auto: false } });
    await a.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30 });
    await a.completions.create({ prompt: LONG, temperature: 0, max_tokens: 1 });
    expect(await listPromptCaches({ store })).toEqual([]);
    expect(await a.saveCache()).toBe(2);
    const b = await open({ persistedCache: { store } });
    const r = await b.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30 });
    expect(r.choices[0].text).toBe(REF.greedy_kv_f32.text);
    expect(r.usage.prompt_tokens_details?.cached_tokens).toBe(r.usage.prompt_tokens - 1);
    const long = await b.completions.create({ prompt: LONG, temperature: 0, max_tokens: 40 });
    expect(long.usage.prompt_tokens_details?.cached_tokens).toBe(long.usage.prompt_tokens - 1);
    expect(long.choices[0].text).toBe(await coldText('cpu'));
  });

  it('an entry with damaged rows is ignored and deleted; output stays correct', async () => {
    const inner = memoryPromptCacheStore();
    let damage = false;
    const store: PromptCacheStore = {
      ...inner,
      readRows: async (id) => {
        const rows = await inner.readRows(id);
        if (damage && rows !== undefined) rows[rows.length >> 1] ^= 0x40;
        return rows;
      },
    };
    await chat(await open({ persistedCache: { store } }), 'Hi.');
    expect(await listPromptCaches({ store })).toHaveLength(1);
    damage = true;
    const b = await open({ persistedCache: { store } });
    expect(await listPromptCaches({ store })).toEqual([]);
    const warm = await chat(b, 'Tell me a story.');
    expect(warm.cached).toBe(0);
  });

  it('entries of another model or another chat template are not restored', async () => {
    const store = memoryPromptCacheStore();
    await chat(await open({ persistedCache: { store } }), 'Hi.');
    const copy = join(dir, 'other.gguf');
    copyFileSync(MODEL, copy); // same bytes, another identity (name + size)
    const other = await open({ model: copy, persistedCache: { store } });
    expect((await chat(other, 'Tell me a story.')).cached).toBe(0);
    const templated = await open({ persistedCache: { store }, chatTemplate: `${TEMPLATE} ` });
    expect((await chat(templated, 'Tell me a story.')).cached).toBe(0);
  });

  it('a folder store survives a restart; corrupted files are ignored; entries are listed and deleted', async () => {
    const path = join(dir, 'cache');
    await chat(await open({ persistedCache: { path } }), 'Hi.');
    const [record] = await listPromptCaches({ path });
    expect(readdirSync(path).sort()).toEqual([`${record.id}.json`, `${record.id}.kv`]);
    expect((await chat(await open({ persistedCache: { path } }), 'Tell me a story.')).cached).toBe(
      record.tokens.length,
    );
    const kvFile = join(path, `${record.id}.kv`);
    const bytes = readFileSync(kvFile);
    bytes[7] ^= 1;
    writeFileSync(kvFile, bytes);
    expect((await chat(await open({ persistedCache: { path } }), 'Tell me a story.')).cached).toBe(0);
    await chat(engines[engines.length - 1], 'Hi again.'); // the next request persists it again (once per engine)
    const again = await listPromptCaches({ path });
    expect(again).toHaveLength(1);
    expect(await deletePromptCache(again[0].id, { path })).toBe(true);
    expect(await listPromptCaches({ path })).toEqual([]);
  });

  it('LRU eviction keeps the store under maxBytes', async () => {
    const store = memoryPromptCacheStore();
    const e = await open({ persistedCache: { store, auto: false } });
    await e.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 10 });
    expect(await e.saveCache()).toBe(1);
    const [first] = await listPromptCaches({ store });
    const small = await open({ persistedCache: { store, auto: false, maxBytes: first.bytes * 1.5 } });
    await small.completions.create({ prompt: 'A cat sat on the mat', temperature: 0, max_tokens: 10 });
    await small.saveCache();
    const left = await listPromptCaches({ store });
    expect(left.reduce((n, r) => n + r.bytes, 0)).toBeLessThanOrEqual(first.bytes * 1.5);
    expect(left.some((r) => r.id === first.id)).toBe(false);
  });

  it('the wasm backend saves and restores its KV rows too (and a cpu entry restores on wasm: both f32)', async () => {
    const store = memoryPromptCacheStore();
    const a = await open({ backend: 'wasm', threads: 1, kvType: 'f32', persistedCache: { store, auto: false } });
    await a.completions.create({ prompt: LONG, temperature: 0, max_tokens: 1 });
    expect(await a.saveCache()).toBe(1);
    const [record] = await listPromptCaches({ store });
    expect(record.kv).toMatch(/^f32:/);
    for (const backend of ['wasm', 'cpu'] as const) {
      const b = await open({ backend, threads: 1, kvType: 'f32', persistedCache: { store } });
      const r = await b.completions.create({ prompt: LONG, temperature: 0, max_tokens: 40 });
      expect(r.usage.prompt_tokens_details?.cached_tokens).toBe(r.usage.prompt_tokens - 1);
      expect(r.choices[0].text).toBe(await coldText(backend, 'f32'));
    }
  });

  it('wasm’s default f16 KV entries restore on wasm and are never served to an f32 cache', async () => {
    const store = memoryPromptCacheStore();
    const a = await open({ backend: 'wasm', threads: 1, persistedCache: { store, auto: false } });
    await a.completions.create({ prompt: LONG, temperature: 0, max_tokens: 1 });
    expect(await a.saveCache()).toBe(1);
    const [record] = await listPromptCaches({ store });
    expect(record.kv).toMatch(/^f16:/);
    const b = await open({ backend: 'wasm', threads: 1, persistedCache: { store } });
    const r = await b.completions.create({ prompt: LONG, temperature: 0, max_tokens: 40 });
    expect(r.usage.prompt_tokens_details?.cached_tokens).toBe(r.usage.prompt_tokens - 1);
    expect(r.choices[0].text).toBe(await coldText('wasm'));
    const c = await open({ backend: 'cpu', persistedCache: { store } });
    const rc = await c.completions.create({ prompt: LONG, temperature: 0, max_tokens: 1 });
    expect(rc.usage.prompt_tokens_details?.cached_tokens ?? 0).toBe(0);
  });
});
