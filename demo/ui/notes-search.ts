/**
 * "Search your notes": ranks pasted notes (one per line) by meaning against a query with an embedding model, all in
 * the page. Each text is formatted as the model's card asks (`EmbeddingFormat`), embedded with
 * `engine.embeddings.create` (unit vectors), and notes are ranked by cosine similarity (their dot product).
 */
import type { Engine } from '../../src/index';
import type { EmbeddingFormat } from './catalogue';

/** One ranked note. */
export interface NoteHit {
  /** Line of the note among the non-empty lines. */
  readonly index: number;
  readonly text: string;
  /** Cosine similarity to the query, −1…1. */
  readonly score: number;
}

/** The non-empty, trimmed lines of `text`. */
export function splitNotes(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/** Ranks `notes` by similarity to `query`, best first (ties keep note order). */
export async function searchNotes(
  engine: Engine,
  format: EmbeddingFormat,
  notes: readonly string[],
  query: string,
  signal?: AbortSignal,
): Promise<NoteHit[]> {
  const input = [
    `${format.queryPrefix}${query}${format.suffix}`,
    ...notes.map((n) => `${format.documentPrefix}${n}${format.suffix}`),
  ];
  const r = await engine.embeddings.create({
    input,
    truncate: true,
    ...(format.pooling ? { pooling: format.pooling } : {}),
    ...(signal ? { signal } : {}),
  });
  const vectors = r.data.map((d) => d.embedding as number[]);
  const q = vectors[0]!;
  const dot = (v: number[]): number => v.reduce((s, x, i) => s + x * q[i]!, 0);
  return notes
    .map((text, index) => ({ index, text, score: dot(vectors[index + 1]!) }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
}
