/**
 * The checks every evaluation of the forward pass makes before it records anything: the sequence slot exists, the
 * tokens are in the vocabulary and fit the context from their start position, and a multi-sequence step names each
 * slot once within the rows the model takes. Each failure is an `LlmError` naming the value.
 */

import { LlmError } from '../errors.js';
import type { SequenceToken } from './model.js';

/** What the checks read of the model (a `TransformerModel` is one). */
export interface EvalLimits {
  readonly nSlots: number;
  readonly contextLength: number;
  /** Rows of a multi-sequence step (0: the model takes none). */
  readonly maxSequenceRows: number;
  readonly config: { readonly vocabSize: number };
}

export function checkRows(m: EvalLimits, rows: readonly SequenceToken[]): void {
  if (rows.length === 0 || rows.length > m.maxSequenceRows) {
    throw new LlmError(
      'invalid-request',
      `evaluating sequences: ${rows.length} rows given; this model takes 1…${m.maxSequenceRows} per step (one per slot)`,
      { details: { rows: rows.length, maxSequenceRows: m.maxSequenceRows } },
    );
  }
  const slots = new Set<number>();
  for (const r of rows) {
    checkRequest(m, Int32Array.of(r.token), r.pos, r.slot);
    if (slots.has(r.slot)) {
      throw new LlmError('invalid-request', `evaluating sequences: slot ${r.slot} appears twice in one step`, {
        details: { slot: r.slot },
      });
    }
    slots.add(r.slot);
  }
}

export function checkRequest(m: EvalLimits, tokens: Int32Array, startPos: number, slot: number): void {
  checkSlot(m, slot);
  if (tokens.length === 0) throw new LlmError('invalid-request', 'evaluating tokens: the token list is empty');
  if (!(Number.isSafeInteger(startPos) && startPos >= 0)) {
    throw new LlmError(
      'invalid-request',
      `evaluating tokens: start position ${startPos} is not a non-negative integer`,
    );
  }
  if (startPos + tokens.length > m.contextLength) {
    throw new LlmError(
      'context-overflow',
      `evaluating ${tokens.length} tokens at position ${startPos}: the context holds ${m.contextLength} positions; ` +
        'load the model with a larger contextLength or shorten the input',
      { details: { startPos, nTokens: tokens.length, contextLength: m.contextLength } },
    );
  }
  for (let i = 0; i < tokens.length; i++) {
    if (!(tokens[i] >= 0 && tokens[i] < m.config.vocabSize)) {
      throw new LlmError(
        'invalid-request',
        `evaluating tokens: token ${i} has id ${tokens[i]}, outside the vocabulary (0…${m.config.vocabSize - 1})`,
        {
          details: { index: i, token: tokens[i], vocabSize: m.config.vocabSize },
        },
      );
    }
  }
}

export function checkSlot(m: EvalLimits, slot: number): void {
  if (!(Number.isInteger(slot) && slot >= 0 && slot < m.nSlots)) {
    throw new LlmError(
      'invalid-request',
      `sequence slot ${slot} does not exist (the model was loaded with ${m.nSlots})`,
      {
        details: { slot, nSlots: m.nSlots },
      },
    );
  }
}

/**
 * Row of a model's logits buffer to read: `row` of the last `evalRows` (which kept `sequenceRows`), or the last
 * evaluated token's (`lastRow`, −1 when the last eval kept none: `invalid-request`).
 */
export function logitsRowOf(row: number | undefined, lastRow: number, sequenceRows: number): number {
  if (lastRow < 0) {
    throw new LlmError(
      'invalid-request',
      "reading logits: the last eval did not keep any (call eval with logits 'last' or 'all')",
    );
  }
  if (row === undefined) return lastRow;
  if (!(Number.isInteger(row) && row >= 0 && row < Math.max(1, sequenceRows))) {
    throw new LlmError(
      'invalid-request',
      `reading logits: row ${row} does not exist (the last step kept ${Math.max(1, sequenceRows)})`,
    );
  }
  return sequenceRows > 0 ? row : lastRow;
}
