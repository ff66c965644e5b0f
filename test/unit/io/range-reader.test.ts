/**
 * The HTTP range reader against the fault-injecting server: in every fault scenario the bytes obtained have the
 * fixture's sha256, or the error is the clear `LlmError` that scenario calls for. Request logs prove resumption
 * (no byte fetched twice), bounded concurrency and `If-Range` use.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpByteSource, type HttpByteSourceOptions } from '../../../src/io/http-source.js';
import { isFileChangedError } from '../../../src/io/http-response-checks.js';
import { RangeReader } from '../../../src/io/range-reader.js';
import { type Fault, type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { llmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';

const PATH = '/models/stories260K.gguf';
const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
const FIXTURE_SHA = sha(FIXTURE);
const CHUNK = 128 * 1024;
const FAST: HttpByteSourceOptions = { chunkBytes: CHUNK, maxInFlight: 3, retryDelayMs: 1, retries: 4 };

function sha(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.setFault(PATH, undefined);
  await server.idle(); // stragglers of an earlier test's aborted requests stay out of this test's log
  server.clearLog();
});

/** Opens the fixture with `fault` installed and reads it whole. */
async function readWhole(
  fault: Fault | undefined,
  options: HttpByteSourceOptions = {},
): Promise<{ bytes: Uint8Array; source: HttpByteSource }> {
  server.setFault(PATH, fault);
  const source = await HttpByteSource.open(server.url(PATH), { ...FAST, ...options });
  const bytes = await source.read(0, source.size);
  return { bytes, source };
}

describe('range reader: bytes arrive intact', () => {
  const scenarios: { name: string; fault: Fault | undefined; options?: HttpByteSourceOptions; check?: () => void }[] = [
    {
      name: 'clean server: one probe, one request per chunk, at most maxInFlight at once',
      fault: undefined,
      check: () => {
        expect(server.requestsFor(PATH)).toHaveLength(1 + Math.ceil(FIXTURE.byteLength / CHUNK));
        expect(server.maxConcurrent).toBeLessThanOrEqual(3);
        expect(
          server
            .requestsFor(PATH)
            .slice(1)
            .every((r) => r.ifRange?.startsWith('"') === true),
        ).toBe(true);
      },
    },
    {
      name: 'connection dropped after 50,000 bytes (6 times): resumed from the last byte, nothing fetched twice',
      fault: { skip: 1, times: 6, dropAfterBytes: 50_000 },
      check: () => {
        const ranged = server.requestsFor(PATH).slice(1);
        expect(ranged.length).toBeGreaterThan(Math.ceil(FIXTURE.byteLength / CHUNK));
        expect(ranged.some((r) => Number(/bytes=(\d+)/.exec(r.range ?? '')?.[1]) % CHUNK !== 0)).toBe(true);
        expect(ranged.reduce((n, r) => n + r.bytesSent, 0)).toBe(FIXTURE.byteLength);
      },
    },
    {
      name: 'short body without error (truncating proxy, 3 times): resumed',
      fault: { skip: 1, times: 3, shortBodyBytes: 1000 },
      check: () => expect(server.requestsFor(PATH).length).toBe(1 + Math.ceil(FIXTURE.byteLength / CHUNK) + 3),
    },
    {
      name: 'HTTP 500 twice, then success: retried with backoff',
      fault: { skip: 1, times: 2, status: 500 },
      check: () => expect(server.requestsFor(PATH).filter((r) => r.status === 500)).toHaveLength(2),
    },
    {
      name: 'HTTP 503 on the probe, then success',
      fault: { times: 1, status: 503 },
      check: () =>
        expect(
          server
            .requestsFor(PATH)
            .map((r) => r.status)
            .slice(0, 2),
        ).toEqual([503, 206]),
    },
    {
      name: 'slow trickle (8 KiB every 2 ms)',
      fault: { skip: 1, trickle: { bytesPerWrite: 8192, delayMs: 2 } },
      options: { stallTimeoutMs: 2000 },
    },
    {
      name: 'stall after 20,000 bytes (3 times): stall timeout cancels the attempt and resumes',
      fault: { skip: 1, times: 3, stallAfterBytes: 20_000 },
      options: { stallTimeoutMs: 150 },
      check: () => {
        const ranged = server.requestsFor(PATH).slice(1);
        expect(ranged).toHaveLength(Math.ceil(FIXTURE.byteLength / CHUNK) + 3);
        expect(ranged.reduce((n, r) => n + r.bytesSent, 0)).toBe(FIXTURE.byteLength);
      },
    },
    {
      name: 'server ignores Range (200 full body): streamed once and served from memory',
      fault: { ignoreRange: true },
      check: () => expect(server.requestsFor(PATH)).toHaveLength(1),
    },
    {
      name: 'no ETag/Last-Modified: no If-Range sent, still intact',
      fault: { noValidators: true },
      check: () => expect(server.requestsFor(PATH).every((r) => r.ifRange === null)).toBe(true),
    },
  ];
  for (const s of scenarios) {
    it(s.name, async () => {
      const { bytes, source } = await readWhole(s.fault, s.options);
      expect(source.size).toBe(FIXTURE.byteLength);
      expect(sha(bytes)).toBe(FIXTURE_SHA);
      s.check?.();
    });
  }

  it('partial reads at odd offsets match the file, including across request boundaries', async () => {
    const source = await HttpByteSource.open(server.url(PATH), { ...FAST, chunkBytes: 1000 });
    for (const [offset, length] of [
      [0, 0],
      [0, 24],
      [999, 2],
      [123_457, 5_001],
      [FIXTURE.byteLength - 7, 7],
    ]) {
      expect(sha(await source.read(offset, length))).toBe(sha(FIXTURE.subarray(offset, offset + length)));
    }
    const e = await llmError(source.read(FIXTURE.byteLength - 1, 2));
    expect(e.code).toBe('gguf-invalid');
  });

  it('reports download progress up to the file size', async () => {
    const seen: number[] = [];
    const source = await HttpByteSource.open(server.url(PATH), {
      ...FAST,
      onProgress: (p) => seen.push(p.loadedBytes),
    });
    await source.read(0, source.size);
    expect(seen.at(-1)).toBe(FIXTURE.byteLength);
    expect(seen.every((n, i) => i === 0 || n >= seen[i - 1])).toBe(true);
  });

  it('an empty file (416 bytes */0 on the probe) has size 0', async () => {
    const path = '/empty.gguf';
    server.replaceFile(path, new Uint8Array(0));
    const source = await HttpByteSource.open(server.url(path), FAST);
    expect(source.size).toBe(0);
    expect((await source.read(0, 0)).byteLength).toBe(0);
  });
});

describe('range reader: clear errors', () => {
  const cases: { name: string; fault: Fault; code: string; status?: number; options?: HttpByteSourceOptions }[] = [
    { name: '404 on open', fault: { status: 404 }, code: 'network', status: 404 },
    { name: '403 on open', fault: { status: 403 }, code: 'network', status: 403 },
    { name: '416 on every ranged read', fault: { skip: 1, status: 416 }, code: 'network', status: 416 },
    { name: '404 appearing mid-read', fault: { skip: 3, status: 404 }, code: 'network', status: 404 },
    {
      name: '500 forever: retries run out',
      fault: { skip: 1, status: 500 },
      code: 'network',
      status: 500,
      options: { retries: 2 },
    },
    {
      name: 'Range ignored and file above maxFullBodyBytes',
      fault: { ignoreRange: true },
      code: 'range-unsupported',
      options: { maxFullBodyBytes: 1 << 20 },
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const e = await llmError(readWhole(c.fault, c.options));
      expect(e.code).toBe(c.code);
      expect(e.message).toContain(server.url(PATH));
      if (c.status !== undefined) {
        expect(e.details?.status).toBe(c.status);
        expect(e.message).toContain(String(c.status));
      }
    });
  }

  it('fetch TypeError (CORS / unreachable): network error naming the URL and CORS', async () => {
    let calls = 0;
    const failing = (async () => {
      calls++;
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    const e = await llmError(
      RangeReader.open('https://models.example/x.gguf', { fetch: failing, retries: 2, retryDelayMs: 1 }),
    );
    expect(e.code).toBe('network');
    expect(e.message).toContain('https://models.example/x.gguf');
    expect(e.message).toContain('CORS');
    expect(calls).toBe(3);
  });

  it('file changes on the server mid-read (If-Range honoured → 200): file-changed error, never mixed bytes', async () => {
    const path = '/changing-1.gguf';
    server.replaceFile(path, FIXTURE);
    const source = await HttpByteSource.open(server.url(path), FAST);
    const head = await source.read(0, CHUNK);
    expect(sha(head)).toBe(sha(FIXTURE.subarray(0, CHUNK)));
    server.replaceFile(
      path,
      FIXTURE.map((b) => b ^ 0x5a),
    );
    const e = await llmError(source.read(CHUNK, 4 * CHUNK));
    expect(isFileChangedError(e)).toBe(true);
    expect(server.requestsFor(path).at(-1)?.status).toBe(200);
  });

  it('file changes and the server ignores If-Range (206 with a new ETag): detected from the ETag', async () => {
    const path = '/changing-2.gguf';
    server.replaceFile(path, FIXTURE);
    const source = await HttpByteSource.open(server.url(path), FAST);
    server.replaceFile(
      path,
      FIXTURE.map((b) => b ^ 0x5a),
    );
    server.setFault(path, { ignoreIfRange: true });
    const e = await llmError(source.read(0, 3 * CHUNK));
    expect(isFileChangedError(e)).toBe(true);
    expect(e.message).toMatch(/ETag/);
  });

  it('file replaced by the server after 3 requests (ETag change fault): whole read rejected, nothing mixed', async () => {
    const path = '/changing-3.gguf';
    server.replaceFile(path, FIXTURE);
    server.setFault(path, { replaceAfterRequests: { requests: 3, bytes: FIXTURE.map((b) => b ^ 0x11) } });
    const source = await HttpByteSource.open(server.url(path), { ...FAST, maxInFlight: 1 });
    const e = await llmError(source.read(0, source.size));
    expect(isFileChangedError(e)).toBe(true);
    expect(server.requestsFor(path).map((r) => r.status)).toEqual([206, 206, 206, 200]);
  });

  it('a CORS preflight refusing If-Range: retried without it, changes still detected from response headers', async () => {
    const path = '/changing-4.gguf';
    server.replaceFile(path, FIXTURE);
    const seen: (string | null)[] = [];
    const corsFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const ifRange = new Headers(init?.headers).get('if-range');
      seen.push(ifRange);
      if (ifRange !== null) throw new TypeError('Failed to fetch');
      return fetch(input, init);
    }) as typeof fetch;
    const source = await HttpByteSource.open(server.url(path), { ...FAST, fetch: corsFetch });
    expect(sha(await source.read(0, source.size))).toBe(FIXTURE_SHA);
    expect(seen.filter((v) => v !== null).length).toBeGreaterThanOrEqual(1);
    expect(seen.at(-1)).toBeNull();
    server.replaceFile(
      path,
      FIXTURE.map((b) => b ^ 0x22),
    );
    expect(isFileChangedError(await llmError(source.read(0, 10)))).toBe(true);
  });

  it('abort during a slow read rejects promptly with aborted', async () => {
    server.setFault(PATH, { skip: 1, trickle: { bytesPerWrite: 1024, delayMs: 20 } });
    const source = await HttpByteSource.open(server.url(PATH), FAST);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const e = await llmError(source.read(0, source.size, controller.signal));
    expect(e.code).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reads after close reject', async () => {
    const source = await HttpByteSource.open(server.url(PATH), FAST);
    await source.close();
    expect((await llmError(source.read(0, 1))).code).toBe('invalid-request');
  });
});
