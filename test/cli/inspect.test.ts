/**
 * `webgguf inspect` run in-process through `runCli`: text and `--json` output for a real fixture, a URL served by the
 * local fault server (header ranges only), 64-bit values in JSON, and bad input (garbage file, missing path, unknown
 * option) exiting non-zero with the LlmError message and no stack trace.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ggufType, writeGguf } from '../../src/gguf/index.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { type CliRun, runCliCaptured } from '../helpers/run-cli.js';
import { sharedPath } from '../helpers/shared-path.js';
import { tinyModel } from '../unit/gguf/gguf-test-kit.js';

const STORIES = sharedPath('models', 'stories260K.gguf');
const tmp = mkdtempSync(join(tmpdir(), 'webgguf-inspect-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const run = (...argv: string[]): Promise<CliRun> => runCliCaptured('inspect', ...argv);

interface JsonReport {
  version: number;
  architecture: string;
  metadataNote: string;
  metadata: Record<string, unknown>;
  hyperParameters: Record<string, unknown>;
  tokenizer: { model: string; pre: string | null; vocabSize: number; hasChatTemplate: boolean };
  tensors: { name: string; type: string; shape: number[]; offset: number; bytes: number }[];
  totals: { tensors: number; params: number; bytes: number; perType: Record<string, { count: number }> };
}

describe('webgguf inspect', () => {
  it('prints a text summary of a model', async () => {
    const { code, out, err } = await run(STORIES);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(/architecture\s+llama/);
    expect(out).toMatch(/context_length\s+2048/);
    expect(out).toMatch(/layer_norm_rms_epsilon\s+0\.00001\b/);
    expect(out).toMatch(/model llama, pre-tokenizer \(none\), vocab 512 tokens/);
    expect(out).toMatch(/chat template absent/);
    expect(out).toMatch(/token_embd\.weight\s+F32\s+\[64, 512\]\s+0\s+131,072/);
    expect(out).toMatch(/48 tensors, 292,800 parameters, 1,171,200 bytes/);
  });

  it('prints one JSON object with --json', async () => {
    const { code, out } = await run(STORIES, '--json');
    expect(code).toBe(0);
    const r = JSON.parse(out) as JsonReport;
    expect(r.version).toBe(3);
    expect(r.architecture).toBe('llama');
    expect(r.hyperParameters['block_count']).toBe(5);
    expect(r.tokenizer).toMatchObject({ model: 'llama', pre: null, vocabSize: 512, hasChatTemplate: false });
    expect(r.metadata['tokenizer.ggml.tokens']).toEqual({
      type: 'ARRAY<STRING>',
      length: 512,
      head: ['<unk>', '<s>', '</s>', '<0x00>', '<0x01>', '<0x02>', '<0x03>', '<0x04>'],
    });
    expect(r.metadataNote).toMatch(/summarised/);
    expect(r.tensors).toHaveLength(48);
    expect(r.tensors[0]).toEqual({
      name: 'token_embd.weight',
      type: 'F32',
      shape: [64, 512],
      offset: 0,
      bytes: 131072,
      params: 32768,
    });
    expect(r.totals).toMatchObject({ tensors: 48, params: 292800, bytes: 1171200, perType: { F32: { count: 48 } } });
  });

  it('reports chat templates, pre-tokenizers and quantized types', async () => {
    const { code, out } = await run(sharedPath('models', 'arch', 'qwen2-q8_0.gguf'), '--json');
    expect(code).toBe(0);
    const r = JSON.parse(out) as JsonReport;
    expect(r.architecture).toBe('qwen2');
    expect(r.tokenizer.hasChatTemplate).toBe(true);
    expect(typeof r.tokenizer.pre).toBe('string');
    expect(Object.keys(r.totals.perType)).toContain('Q8_0');
  });

  it('writes 64-bit integers as numbers when exact and strings otherwise', async () => {
    const path = join(tmp, 'u64.gguf');
    const model = tinyModel();
    writeFileSync(
      path,
      writeGguf({
        ...model,
        metadata: { ...model.metadata, 'general.big': 2n ** 60n, 'general.small': 7n, 'general.nan': NaN },
        metadataTypes: { ...model.metadataTypes, 'general.big': ggufType.UINT64, 'general.small': ggufType.UINT64 },
      }),
    );
    const r = JSON.parse((await run(path, '--json')).out) as JsonReport;
    expect(r.metadata['general.big']).toBe('1152921504606846976');
    expect(r.metadata['general.small']).toBe(7);
    expect(r.metadata['general.nan']).toBe('NaN');
  });

  it('reads a URL through HTTP range requests, fetching only the header', async () => {
    const server = await startFaultServer();
    try {
      const { code, out } = await run(server.url('/models/stories260K.gguf'), '--json');
      expect(code).toBe(0);
      expect((JSON.parse(out) as JsonReport).tensors).toHaveLength(48);
      const sent = server.requestsFor('/models/stories260K.gguf').reduce((n, q) => n + q.bytesSent, 0);
      expect(sent).toBeLessThan(1_185_376 + 64 * 1024);
    } finally {
      await server.close();
    }
  });

  it('fails on garbage with the LlmError message and no stack trace', async () => {
    const path = join(tmp, 'garbage.gguf');
    writeFileSync(
      path,
      new Uint8Array(4096).map((_, i) => (i * 131 + 7) & 0xff),
    );
    const { code, out, err } = await run(path);
    expect(code).not.toBe(0);
    expect(out).toBe('');
    expect(err).toMatch(/^webgguf inspect: GGUF magic at byte offset 0: not a GGUF file/);
    expect(err).not.toMatch(/\n\s+at /);
  });

  it('fails on a truncated model, a missing file and bad arguments', async () => {
    const path = join(tmp, 'truncated.gguf');
    writeFileSync(path, writeGguf(tinyModel()).subarray(0, 100));
    expect((await run(path)).err).toMatch(/GGUF .* at byte offset \d+.*truncated/);
    const missing = await run(join(tmp, 'nope.gguf'));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/ENOENT/);
    expect((await run()).err).toMatch(/usage: webgguf inspect/);
    expect((await run(STORIES, '--bogus')).err).toMatch(/unknown option --bogus/);
  });
});
