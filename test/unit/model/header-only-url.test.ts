/**
 * A URL serving a ~1 KB hostile header (issue #21 item 1): the server claims a 2 GiB model but only the header is
 * real. `createEngine` reads the header alone and plans memory before any download; hostile counts there must end as
 * `gguf-invalid` naming the key — not a V8 heap abort or a raw `RangeError` — and nothing past the header is fetched.
 */
import 'fake-indexeddb/auto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { GgmlType, GgufValueType, type GgufValue, type GgufValueTypeInfo, writeGguf } from '../../../src/gguf/index.js';
import { llmError } from '../../helpers/llm-error.js';

const CLAIMED_SIZE = 2 * 1024 ** 3;

/** The header (metadata + tensor table) of a tiny llama whose block_count is `blocks`, without its tensor data. */
function hostileHeader(blocks: GgufValue, type: GgufValueTypeInfo): Uint8Array {
  const embd = 8;
  const tensors = [
    { name: 'token_embd.weight', type: GgmlType.F32, shape: [embd, 4], data: new Uint8Array(embd * 4 * 4) },
    { name: 'blk.0.attn_q.weight', type: GgmlType.F32, shape: [embd, embd], data: new Uint8Array(embd * embd * 4) },
  ];
  const full = writeGguf({
    metadata: {
      'general.architecture': 'llama',
      'llama.block_count': blocks,
      'llama.embedding_length': embd,
      'llama.attention.head_count': 2,
      'llama.feed_forward_length': 16,
      'tokenizer.ggml.model': 'llama',
      'tokenizer.ggml.tokens': ['<unk>', '<s>', '</s>', 'a'],
    },
    metadataTypes: { 'llama.block_count': type },
    tensors,
  });
  return full.subarray(0, full.length - tensors.reduce((n, t) => n + t.data.length, 0));
}

describe('hostile header behind a URL (memory plan before download)', () => {
  let server: Server;
  let origin = '';
  const files = new Map<string, Uint8Array>();
  const requests: { path: string; range: string | null }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const range = req.headers.range ?? null;
      requests.push({ path, range });
      const header = files.get(path);
      const m = /^bytes=(\d+)-(\d*)$/.exec(range ?? '');
      if (!header || !m) {
        res.writeHead(header ? 503 : 404).end(); // a whole-file download is not expected here
        return;
      }
      const start = Number(m[1]);
      const end = Math.min(
        CLAIMED_SIZE - 1,
        m[2] === '' ? CLAIMED_SIZE - 1 : Number(m[2]),
        start + 4 * 1024 * 1024 - 1,
      );
      const body = new Uint8Array(end - start + 1); // zeros past the header, as a 2 GiB file of nothing
      if (start < header.length) body.set(header.subarray(start, Math.min(header.length, end + 1)));
      res.writeHead(206, {
        'Content-Range': `bytes ${start}-${end}/${CLAIMED_SIZE}`,
        'Content-Length': String(body.length),
        'Accept-Ranges': 'bytes',
        ETag: `"${path}"`,
      });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const cases: [string, GgufValue, GgufValueTypeInfo][] = [
    ['1e8', 1e8, { type: GgufValueType.UINT32 }],
    ['2^31', 2 ** 31, { type: GgufValueType.UINT32 }],
    ['2^40', 2n ** 40n, { type: GgufValueType.UINT64 }],
    ['0', 0, { type: GgufValueType.UINT32 }],
  ];
  it.each(cases)(
    'block_count %s',
    async (label, value, type) => {
      const header = hostileHeader(value, type);
      expect(header.length).toBeLessThan(2048);
      const path = `/blocks-${label}.gguf`;
      files.set(path, header);
      const t0 = performance.now();
      const err = await llmError(createEngine({ model: `${origin}${path}`, backend: 'cpu' }));
      expect(performance.now() - t0).toBeLessThan(10_000);
      expect(err.code, err.message).toBe('gguf-invalid');
      expect(err.message).toContain("'llama.block_count'");
      // Only ranged reads of the header region: no download of the claimed 2 GiB.
      const mine = requests.filter((r) => r.path === path);
      expect(mine.every((r) => r.range !== null)).toBe(true);
    },
    30_000,
  );
});
