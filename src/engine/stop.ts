/**
 * Stop strings matched across token boundaries. Text passes through `StopMatcher.push`; anything that could still be
 * the start of a stop string is held back until it is either ruled out (then emitted) or completed (then the stream
 * ends there). A stop string itself is never emitted.
 */

/** What one `push` releases. */
export interface StopResult {
  /** Text that can be shown now (never part of a stop string). */
  readonly text: string;
  /** True when a stop string completed; `text` ends right before it and generation should end. */
  readonly stopped: boolean;
  /** The stop string that matched, when `stopped`. */
  readonly stop?: string;
}

/** Incremental stop-string matcher for one generation. */
export class StopMatcher {
  private readonly stops: readonly string[];
  private held = '';
  private done = false;

  /** `stops`: the strings that end generation; empty strings are ignored. */
  constructor(stops: readonly string[]) {
    this.stops = [...new Set(stops.filter((s) => s.length > 0))];
  }

  /** Feeds newly decoded text. After a stop has matched, further text is ignored. */
  push(text: string): StopResult {
    if (this.done) return { text: '', stopped: true };
    const buffer = this.held + text;
    if (this.stops.length === 0) {
      this.held = '';
      return { text: buffer, stopped: false };
    }
    // Earliest complete match wins; on equal start, the longest stop string.
    let at = -1;
    let which = '';
    for (const s of this.stops) {
      const i = buffer.indexOf(s);
      if (i >= 0 && (at < 0 || i < at || (i === at && s.length > which.length))) {
        at = i;
        which = s;
      }
    }
    if (at >= 0) {
      this.done = true;
      this.held = '';
      return { text: buffer.slice(0, at), stopped: true, stop: which };
    }
    const keep = this.partialSuffixLength(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  /** Releases text held back at the end of generation (it turned out not to be a stop string). */
  flush(): string {
    const t = this.done ? '' : this.held;
    this.held = '';
    return t;
  }

  /** Length of the longest suffix of `buffer` that is a proper prefix of some stop string. */
  private partialSuffixLength(buffer: string): number {
    let best = 0;
    for (const s of this.stops) {
      const max = Math.min(s.length - 1, buffer.length);
      for (let len = max; len > best; len--) {
        if (buffer.endsWith(s.slice(0, len))) {
          best = len;
          break;
        }
      }
    }
    return best;
  }
}
