/**
 * The demo's "search your notes" ranking (demo/ui/notes-search.ts) on a real engine (recorded qwen3 embedding
 * fixture, CPU): notes split by line, formatted per the model's card, ranked by cosine similarity — a note identical
 * to the query ranks first with score 1.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { EMBEDDING_MODEL } from '../../../demo/ui/catalogue.js';
import { searchNotes, splitNotes } from '../../../demo/ui/notes-search.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

describe('searchNotes', () => {
  it('splits lines and ranks by cosine, the identical note first', async () => {
    expect(splitNotes('  a \n\n b\n')).toEqual(['a', 'b']);
    const engine = await createEngine({
      model: join(RECORDED_FIXTURE_DIR, 'qwen3-f32-embd-mean-s6.gguf'),
      backend: 'cpu',
      warmup: false,
    });
    try {
      const format = { queryPrefix: '', documentPrefix: '', suffix: '' };
      const notes = ['The little dog ran to the park.', 'Lily', 'Once upon a time, there was a robot.'];
      const hits = await searchNotes(engine, format, notes, 'Once upon a time, there was a robot.');
      expect(hits.map((h) => h.index).sort()).toEqual([0, 1, 2]);
      expect(hits[0]).toMatchObject({ index: 2, text: notes[2] });
      expect(hits[0]!.score).toBeCloseTo(1, 5);
      expect(hits[1]!.score).toBeGreaterThanOrEqual(hits[2]!.score);
      expect(EMBEDDING_MODEL.url).toMatch(/^https:\/\/huggingface\.co\/.+\.gguf$/);
    } finally {
      await engine.unload();
    }
  });
});
