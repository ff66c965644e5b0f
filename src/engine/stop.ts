/**
 * Stop strings matched across token boundaries. Text passes through `StopMatcher.push`; anything that could still be
 * the start of a stop string is held back until it is either ruled out (then emitted) or completed (then the stream
 * ends there). A stop string itself is never emitted.
 *
 * Each stop string is matched by its own Knuth–Morris–Pratt automaton whose state (the longest prefix of the stop
 * string that ends the text so far) carries over between pushes, so every character is examined a bounded number of
 * times per stop string: the cost of a push is O(its text × number of stops), never a rescan of earlier output, and
 * the text held back is at most the longest stop string minus one.
 */

/** Longest stop string accepted, in UTF-16 code units. */
export const MAX_STOP_LENGTH = 256;

/** What one `push` releases. */
export interface StopResult {
  /** Text that can be shown now (never part of a stop string). */
  readonly text: string;
  /** True when a stop string completed; `text` ends right before it and generation should end. */
  readonly stopped: boolean;
  /** The stop string that matched, when `stopped`. */
  readonly stop?: string;
}

/** One stop string with its KMP failure table and current state. */
interface Automaton {
  readonly stop: string;
  /** `failure[i]`: length of the longest proper border of `stop.slice(0, i + 1)`. */
  readonly failure: Uint32Array;
  /** Length of the longest prefix of `stop` that is a suffix of the text seen so far (< stop.length). */
  state: number;
}

/** Incremental stop-string matcher for one generation. */
export class StopMatcher {
  private readonly automata: Automaton[];
  private held = '';
  private done = false;
  private steps = 0;

  /** `stops`: the strings that end generation; empty strings are ignored. */
  constructor(stops: readonly string[]) {
    this.automata = [...new Set(stops.filter((s) => s.length > 0))].map((stop) => ({
      stop,
      failure: failureTable(stop),
      state: 0,
    }));
  }

  /**
   * Character comparisons made so far: a measure of the matcher's work, bounded by 2 × (text pushed) × (number of
   * stop strings). Exposed so tests can check the cost without timing.
   */
  get comparisons(): number {
    return this.steps;
  }

  /** Feeds newly decoded text. After a stop has matched, further text is ignored. */
  push(text: string): StopResult {
    if (this.done) return { text: '', stopped: true };
    if (this.automata.length === 0) return { text, stopped: false };
    const buffer = this.held + text;
    const base = this.held.length; // `text[i]` is `buffer[base + i]`
    // Earliest complete match wins; on equal start, the longest stop string.
    let bestStart = -1;
    let best = '';
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      for (const a of this.automata) {
        let q = a.state;
        const s = a.stop;
        for (;;) {
          this.steps++;
          if (s.charCodeAt(q) === c) {
            q++;
            break;
          }
          if (q === 0) break;
          q = a.failure[q - 1];
        }
        if (q === s.length) {
          const start = base + i + 1 - s.length;
          if (bestStart < 0 || start < bestStart || (start === bestStart && s.length > best.length)) {
            bestStart = start;
            best = s;
          }
          q = a.failure[q - 1];
        }
        a.state = q;
      }
    }
    if (bestStart >= 0) {
      this.done = true;
      this.held = '';
      return { text: buffer.slice(0, bestStart), stopped: true, stop: best };
    }
    let keep = 0;
    for (const a of this.automata) keep = Math.max(keep, a.state);
    this.held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  /** Releases text held back at the end of generation (it turned out not to be a stop string). */
  flush(): string {
    const t = this.done ? '' : this.held;
    this.held = '';
    for (const a of this.automata) a.state = 0;
    return t;
  }
}

/** The KMP failure function of `s`. */
function failureTable(s: string): Uint32Array {
  const f = new Uint32Array(s.length); // (stop length) border lengths
  let k = 0;
  for (let i = 1; i < s.length; i++) {
    while (k > 0 && s.charCodeAt(i) !== s.charCodeAt(k)) k = f[k - 1];
    if (s.charCodeAt(i) === s.charCodeAt(k)) k++;
    f[i] = k;
  }
  return f;
}
