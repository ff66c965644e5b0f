/**
 * `webgguf embed` (in-process): --json prints the `embeddings.create` object for every --text (in order), the plain
 * form one line per text, --dimensions truncates, and bad usage or a model without pooling exits 1 with a message.
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured } from '../helpers/run-cli.js';
import { RECORDED_FIXTURE_DIR, sharedPath } from '../helpers/shared-path.js';

const MODEL = join(RECORDED_FIXTURE_DIR, 'qwen3-f32-embd-last-s5.gguf');

describe('webgguf embed', () => {
  it('--json prints the embeddings.create object; plain output is one line per text', async () => {
    const json = await runCliCaptured('embed', MODEL, '--text', 'Hi', '--text=Lily', '--json', '--backend', 'cpu');
    expect(json.code, json.err).toBe(0);
    const r = JSON.parse(json.out) as { object: string; data: { index: number; embedding: number[] }[] };
    expect(r.object).toBe('list');
    expect(r.data.map((d) => [d.index, d.embedding.length])).toEqual([
      [0, 128],
      [1, 128],
    ]);
    expect(Math.hypot(...r.data[0]!.embedding)).toBeCloseTo(1, 5);
    expect(json.err).toMatch(/2 embeddings, 4 tokens/);
    const plain = await runCliCaptured('embed', MODEL, '--text', 'Hi', '--dimensions', '8', '-b', 'cpu');
    expect(plain.code, plain.err).toBe(0);
    const [line] = plain.out.trim().split('\n');
    const [index, width, values] = line!.split('\t');
    expect([index, width, values!.split(' ').length]).toEqual(['0', '8', 8]);
  });

  it('usage errors and a model without pooling exit 1 with the reason', async () => {
    const none = await runCliCaptured('embed', MODEL);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/at least one --text/);
    const chat = await runCliCaptured('embed', sharedPath('models', 'stories260K.gguf'), '--text', 'hi', '-b', 'cpu');
    expect(chat.code).toBe(1);
    expect(chat.err).toMatch(/pooling type 'none'/);
    const pooled = await runCliCaptured(
      'embed',
      sharedPath('models', 'stories260K.gguf'),
      '-t',
      'hi',
      '--pooling',
      'mean',
      '--json',
      '-b',
      'cpu',
    );
    expect(pooled.code, pooled.err).toBe(0);
    expect((JSON.parse(pooled.out) as { data: unknown[] }).data).toHaveLength(1);
  });
});
