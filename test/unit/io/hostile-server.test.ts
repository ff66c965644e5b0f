/**
 * The range reader against servers that lie (issue #21 item 3): a 206 without or with a wrong `Content-Range` is an
 * error (never placed into the file), and `Retry-After` on 429/503 is waited out — seconds or HTTP-date, bounded by
 * `maxRetryAfterMs`, abortable.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import 'fake-indexeddb/auto';
import { createStore } from 'idb-keyval';
import { parseRetryAfter } from '../../../src/io/http-response-checks.js';
import { downloadModel } from '../../../src/io/model-download.js';
import { readManifest } from '../../../src/io/model-store.js';
import { HttpByteSource, type HttpByteSourceOptions } from '../../../src/io/http-source.js';
import { type Fault, type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { llmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';

const PATH = '/models/stories260K.gguf';
const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
const CHUNK = 128 * 1024;
const FAST: HttpByteSourceOptions = { chunkBytes: CHUNK, maxInFlight: 1, retryDelayMs: 1, retries: 3 };
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.setFault(PATH, undefined);
  await server.idle();
  server.clearLog();
});

async function readWhole(fault: Fault | undefined, options: HttpByteSourceOptions = {}): Promise<Uint8Array> {
  server.setFault(PATH, fault);
  const source = await HttpByteSource.open(server.url(PATH), { ...FAST, ...options });
  return source.read(0, source.size, options.signal);
}

describe('Content-Range of every 206 is checked', () => {
  it('a 206 without Content-Range on a read: range-unsupported, nothing returned', async () => {
    const e = await llmError(readWhole({ skip: 1, contentRange: null }));
    expect(e.code).toBe('range-unsupported');
    expect(e.message).toContain('no Content-Range');
  });

  it('a 206 without Content-Range on the probe: range-unsupported', async () => {
    expect((await llmError(readWhole({ contentRange: null }))).code).toBe('range-unsupported');
  });

  it('a 206 whose Content-Range names other bytes: network error naming both', async () => {
    const e = await llmError(readWhole({ skip: 1, contentRange: (a, b, size) => `bytes ${a + 1}-${b + 1}/${size}` }));
    expect(e.code).toBe('network');
    expect(e.message).toMatch(/asked for bytes=0-131071/);
  });

  it('a 206 whose Content-Range total differs from the probed size: file-changed error', async () => {
    const e = await llmError(readWhole({ skip: 1, contentRange: (a, b, size) => `bytes ${a}-${b}/${size + 1}` }));
    expect(e.code).toBe('network');
    expect(e.details?.reason).toBe('file-changed');
  });

  it("through a 302, the target's 206 without Content-Range is refused the same way", async () => {
    server.setRedirect('/moved.gguf', PATH);
    server.setFault(PATH, { skip: 1, contentRange: null });
    const source = await HttpByteSource.open(server.url('/moved.gguf'), FAST);
    expect((await llmError(source.read(0, source.size))).code).toBe('range-unsupported');
    expect(server.requestsFor('/moved.gguf').every((r) => r.status === 302)).toBe(true);
    server.setRedirect('/moved.gguf', undefined);
  });

  it('a malformed Content-Range (end before start): range-unsupported', async () => {
    expect((await llmError(readWhole({ skip: 1, contentRange: (a, b, size) => `bytes ${b}-${a}/${size}` }))).code).toBe(
      'range-unsupported',
    );
  });
});

describe('sizes from the server', () => {
  it('a probe claiming 2 TiB or 2^53 - 1 bytes is refused before anything is sized by it (no huge chunk map)', async () => {
    const store = createStore('webgguf-hostile-size', 'models');
    for (const total of [2 ** 41, Number.MAX_SAFE_INTEGER]) {
      server.setFault(PATH, { contentRange: (a, b) => `bytes ${a}-${b}/${total}` });
      const e = await llmError(downloadModel(server.url(PATH), { store, retryDelayMs: 1 }));
      expect(e.code).toBe('storage-quota');
      expect(e.details?.neededBytes).toBe(total);
      expect(await readManifest(server.url(PATH), { store })).toBeUndefined();
    }
  });
});

describe('Retry-After', () => {
  it('parses delay-seconds and HTTP-dates; rejects garbage', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0);
    for (const bad of [null, '', '-1', '1.5', 'soon', '1e3']) expect(parseRetryAfter(bad, now)).toBeNull();
  });

  it('503 with Retry-After: 1 waits a second (not the 1 ms backoff), then succeeds', async () => {
    const bytes = await readWhole({ skip: 1, times: 1, status: 503, retryAfter: '1' });
    expect(sha(bytes)).toBe(sha(FIXTURE));
    const [, refused, retried] = server.requestsFor(PATH);
    expect(refused.status).toBe(503);
    expect(retried.at - refused.at).toBeGreaterThanOrEqual(950);
  });

  it('429 with Retry-After as an HTTP-date waits until then', async () => {
    const at = new Date(Date.now() + 2000).toUTCString(); // whole seconds: 1-2 s from now
    const bytes = await readWhole({ skip: 1, times: 1, status: 429, retryAfter: at });
    expect(sha(bytes)).toBe(sha(FIXTURE));
    const [, refused, retried] = server.requestsFor(PATH);
    expect(retried.at - refused.at).toBeGreaterThanOrEqual(900);
  });

  it('a Retry-After beyond maxRetryAfterMs fails at once with network and details.retryAfterMs', async () => {
    const started = Date.now();
    const e = await llmError(readWhole({ skip: 1, status: 503, retryAfter: '120' }, { maxRetryAfterMs: 60_000 }));
    expect(e.code).toBe('network');
    expect(e.details?.retryAfterMs).toBe(120_000);
    expect(e.message).toContain('maxRetryAfterMs');
    expect(server.requestsFor(PATH)).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('the Retry-After wait is abortable', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const e = await llmError(readWhole({ skip: 1, status: 503, retryAfter: '30' }, { signal: controller.signal }));
    expect(e.code).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
