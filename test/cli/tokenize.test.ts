/**
 * `webgguf tokenize` and `webgguf template`, run in-process through `runCli`.
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured } from '../helpers/run-cli.js';
import { sharedPath } from '../helpers/shared-path.js';

const cli = runCliCaptured;

const STORIES = sharedPath('models', 'stories260K.gguf');
const LLAMA3 = sharedPath('models', 'arch', 'llama3-f16.gguf');

describe('webgguf tokenize', () => {
  it('prints ids, as JSON with --json, with BOS and special parsing on request', async () => {
    const plain = await cli('tokenize', LLAMA3, '--text', '<|begin_of_text|>Hello');
    expect(plain.code).toBe(0);
    const ids = plain.out.trim().split(' ').map(Number);
    expect(ids[0]).not.toBe(2000);
    const special = await cli('tokenize', LLAMA3, '--text', '<|begin_of_text|>Hello', '--special', '--json');
    expect(JSON.parse(special.out)[0]).toBe(2000);
    const bos = await cli('tokenize', LLAMA3, '--text', 'Hello', '--bos', '--json');
    expect(JSON.parse(bos.out)[0]).toBe(2000);
  });

  it('runs llama.cpp vector files: last line "N passed, M failed"', async () => {
    const r = await cli('tokenize', STORIES, '--test', `${STORIES}.inp`);
    expect(r.code).toBe(0);
    expect(r.out.trim().split('\n').pop()).toBe('46 passed, 0 failed');
  });

  it('shows the first mismatches and exits non-zero on failures', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webgguf-tok-'));
    writeFileSync(join(dir, 'v.inp'), 'Hello\n__ggml_vocab_test__\nworld\n__ggml_vocab_test__\n');
    writeFileSync(join(dir, 'v.out'), '1 2 3\n4\n');
    const r = await cli('tokenize', STORIES, '--test', join(dir, 'v.inp'));
    expect(r.code).toBe(1);
    const lines = r.out.trim().split('\n');
    expect(lines[lines.length - 1]).toBe('0 passed, 2 failed');
    expect(r.out).toContain('FAIL "Hello"');
    expect(r.out).toContain('want 1 2 3');
  });

  it('reports usage errors', async () => {
    expect((await cli('tokenize', STORIES)).err).toMatch(/exactly one of --text or --test/);
    expect((await cli('tokenize', '--text', 'x')).err).toMatch(/missing <model>/);
    expect((await cli('tokenize', STORIES, '--text', 'x', '--frobnicate')).err).toMatch(/unknown option --frobnicate/);
    expect((await cli('tokenize', '/nonexistent.gguf', '--text', 'x')).code).toBe(1);
  });
});

describe('webgguf template', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webgguf-tpl-'));
  const file = join(dir, 'messages.json');
  writeFileSync(file, JSON.stringify([{ role: 'user', content: 'Hello!' }]));

  it('prints the rendered prompt and its tokens', async () => {
    const r = await cli('template', sharedPath('models', 'arch', 'qwen2-f16.gguf'), '--messages', file);
    expect(r.code).toBe(0);
    expect(r.out).toContain('<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n');
    expect(r.out).toMatch(/--- \d+ tokens \(template metadata/);
  });

  it('--json gives prompt, tokens, hash and stop strings', async () => {
    const r = await cli('template', sharedPath('models', 'arch', 'qwen2-f16.gguf'), '--messages', file, '--json');
    const doc = JSON.parse(r.out);
    expect(doc.tokens).toContain(2201); // <|im_start|>
    expect(doc.templateHash).toMatch(/^[0-9a-f]{64}$/);
    expect(doc.stopStrings).toContain('<|im_end|>');
  });

  it('falls back to ChatML and reports bad message files', async () => {
    const r = await cli('template', STORIES, '--messages', file);
    expect(r.out).toContain('template chatml-fallback');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"messages": [{"role": "robot", "content": "x"}]}');
    const e = await cli('template', STORIES, '--messages', bad);
    expect(e.code).toBe(1);
    expect(e.err).toMatch(/unknown role "robot"/);
  });
});
