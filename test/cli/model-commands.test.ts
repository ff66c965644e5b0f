/**
 * `webgguf eval`, `conform` and `generate` run in-process on the reference backend against the shared fixtures:
 * output formats, exit statuses, and the stories260K greedy text.
 */

import { describe, expect, it } from 'vitest';
import { runCliCaptured } from '../helpers/run-cli.js';
import { sharedPath } from '../helpers/shared-path.js';

const cli = runCliCaptured;

const STORIES = sharedPath('models', 'stories260K.gguf');

describe('webgguf eval / conform / generate (cpu backend)', () => {
  it('eval --json prints tokens and one logit row per position', async () => {
    const r = await cli('eval', STORIES, '--tokens', '1,403,407', '--json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out) as { tokens: number[]; logits: number[][] };
    expect(json.tokens).toEqual([1, 403, 407]);
    expect(json.logits).toHaveLength(3);
    expect(json.logits[0]).toHaveLength(512);
    expect(json.logits[0].indexOf(Math.max(...json.logits[0]))).toBe(403);
  });

  it('eval --prompt tokenizes with BOS and prints the top logits', async () => {
    const r = await cli('eval', STORIES, '--prompt', 'Once upon a time', '--top', '2');
    expect(r.code).toBe(0);
    expect(r.out).toContain('pos 4 token 378 "▁time" → argmax 432');
  });

  it('conform passes on stories260K and ends with the pass/fail line', async () => {
    const r = await cli('conform', STORIES); // the reference beside the model is found by default
    expect(r.code).toBe(0);
    expect(r.out).toContain('greedy match: 30/30');
    expect(r.out.trimEnd().split('\n').pop()).toBe('3 passed, 0 failed');
  });

  it('conform fails (exit 1) when the limits are impossible', async () => {
    const r = await cli(
      'conform',
      sharedPath('models', 'derived', 'stories260K-q8_0.gguf'),
      '--reference',
      sharedPath('models', 'derived', 'stories260K-q8_0.reference.json'),
      '--max-error',
      '0.001',
      '--greedy',
      'off',
    );
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAIL {2}logits vs llama\.cpp F32-KV/);
    expect(r.out.trimEnd().split('\n').pop()).toBe('2 passed, 1 failed');
  });

  it('generate at temperature 0 streams the known greedy continuation; tokens/s on stderr', async () => {
    const r = await cli('generate', STORIES, '--prompt', 'Once upon a time', '-n', '30', '--temperature', '0');
    expect(r.code).toBe(0);
    expect(r.out).toBe(', there was a little girl named Lily. She loved to play outside in the park. One day,\n');
    expect(r.err).toMatch(/tokens\/s/);
    const seeded = await cli('generate', STORIES, '--prompt', 'Once', '-n', '12', '--seed', '7');
    const again = await cli('generate', STORIES, '--prompt', 'Once', '-n', '12', '--seed', '7');
    expect(seeded.out).toBe(again.out);
  });

  it('bad arguments exit non-zero with a message', async () => {
    expect((await cli('eval', STORIES, '--tokens', '1', '--backend', 'tpu')).err).toContain('--backend must be one of');
    expect((await cli('eval', STORIES)).code).toBe(1);
    expect((await cli('conform', sharedPath('models', 'stories260K.gguf.inp'))).err).toContain('--reference');
    const zero = await cli('generate', STORIES, '--prompt', 'x', '-n', '0');
    expect(zero.code).toBe(1);
    expect(zero.err).toContain("field 'max_tokens' is 0; it must be an integer ≥ 1");
    const badTopP = await cli('generate', STORIES, '--prompt', 'x', '--top-p', '7');
    expect(badTopP.code).toBe(1);
    expect(badTopP.err).toContain('top_p');
  });
});
