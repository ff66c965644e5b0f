/**
 * Where a multi-stream rope model's tokens sit (qwen2vl, qwen3vl): the KV cache stays indexed by sequence order, but
 * an image of nx × ny tokens advances the rope position by max(nx, ny) only (mtmd `MTMD_POS_TYPE_MROPE`), so text
 * after it runs at its KV index minus what the images before it did not advance. Kept per slot from the images
 * `evalEmbeddings` placed; rewriting a slot from a position forgets the images from there, `copySlot` copies them;
 * each row of a multi-sequence step (n choices) takes its own slot's position.
 */

import {
  imageRopePositions,
  type RopePositions,
  sliceRopePositions,
  textRopePositions,
} from '../backend/rope-multi.js';
import type { SequenceToken } from './model.js';

/** An image's token grid after merging: nx columns, ny rows, raster order (mtmd's image_tokens nx, ny). */
export interface ImageGrid {
  readonly nx: number;
  readonly ny: number;
}

/** An image chunk of a slot: KV start, tokens, and how far it advances the rope position. */
interface ImageSpan {
  readonly start: number;
  readonly n: number;
  readonly nPos: number;
}

/** An image chunk as persisted with a prefix's KV (`PromptCacheRecord.ropeImages`): [start, n, nPos]. */
export type RopeImageSpan = readonly [start: number, n: number, nPos: number];

/** The image rows a step runs (null: text rows). */
interface ImageStep {
  readonly grid?: ImageGrid;
  /** Row of the image the step starts at. */
  readonly offset: number;
}

/** See the file header. */
export class RopeStreams {
  private readonly slots = new Map<number, ImageSpan[]>();

  /** The rope position of KV index `pos` of `slot`. */
  ropePosition(slot: number, pos: number): number {
    let p = pos;
    for (const s of this.slots.get(slot) ?? []) if (s.start + s.n <= pos) p -= s.n - s.nPos;
    return p;
  }

  /** KV of `slot` from `pos` on is being rewritten: the images there are forgotten. */
  truncate(slot: number, pos: number): void {
    const spans = this.slots.get(slot);
    if (spans)
      this.slots.set(
        slot,
        spans.filter((s) => s.start + s.n <= pos),
      );
  }

  /** An image of `n` rows (its `grid`, when it has one) now sits at KV start … start+n−1 of `slot`. */
  addImage(slot: number, start: number, n: number, grid: ImageGrid | undefined): void {
    if (!grid) return; // rows without a grid are text-like: one position each
    this.truncate(slot, start);
    this.slots.get(slot)?.push({ start, n, nPos: Math.max(grid.nx, grid.ny) }) ??
      this.slots.set(slot, [{ start, n, nPos: Math.max(grid.nx, grid.ny) }]);
  }

  /** `copySlot`: dst holds src's first `nPositions` positions. */
  copy(src: number, dst: number, nPositions: number): void {
    this.slots.set(
      dst,
      (this.slots.get(src) ?? []).filter((s) => s.start + s.n <= nPositions),
    );
  }

  /** The images wholly inside positions 0 … nPositions−1 of `slot`, in order (to persist with that prefix's KV). */
  spans(slot: number, nPositions: number): RopeImageSpan[] {
    return (this.slots.get(slot) ?? []).filter((s) => s.start + s.n <= nPositions).map((s) => [s.start, s.n, s.nPos]);
  }

  /**
   * True when persisted `spans` fit a prefix of `tokens`: [start, n, nPos] integers each, in order, inside the
   * tokens, over placeholder ids (negative), advancing 1 … n positions.
   */
  fits(spans: unknown, tokens: readonly number[]): spans is readonly RopeImageSpan[] {
    if (!Array.isArray(spans)) return false;
    let end = 0;
    for (const span of spans as unknown[]) {
      if (!Array.isArray(span) || span.length !== 3 || !span.every((v) => Number.isSafeInteger(v))) return false;
      const [start, n, nPos] = span as [number, number, number];
      if (start < end || n < 1 || nPos < 1 || nPos > n || start + n > tokens.length) return false;
      for (let i = start; i < start + n; i++) if (!(tokens[i]! < 0)) return false;
      end = start + n;
    }
    return true;
  }

  /** `slot` now holds KV restored with these images (checked by `fits`): its earlier images are forgotten. */
  place(slot: number, spans: readonly RopeImageSpan[]): void {
    this.slots.set(
      slot,
      spans.map(([start, n, nPos]) => ({ start, n, nPos })),
    );
  }

  /**
   * The streams of a step of n rows at KV startPos of `slot` ([4, n]): an image's grid rows (`image.offset` on), or
   * text rows at their rope positions; undefined where those equal the KV positions (the backends derive them).
   */
  step(slot: number, startPos: number, n: number, image: ImageStep | null): RopePositions | undefined {
    if (image?.grid) {
      const { nx, ny } = image.grid;
      const all = imageRopePositions(this.ropePosition(slot, startPos - image.offset), nx, ny);
      return sliceRopePositions(all, image.offset, n);
    }
    const p = this.ropePosition(slot, startPos);
    return p === startPos ? undefined : textRopePositions(p, n);
  }

  /**
   * The streams of each row of a multi-sequence step (one token per sequence, `Ops.setSequence`): a row after an
   * image at its text rope position ([4, 1]), undefined where that equals its KV position.
   */
  rowPositions(rows: readonly SequenceToken[]): (RopePositions | undefined)[] {
    return rows.map((r) => this.step(r.slot, r.pos, 1, null));
  }
}
