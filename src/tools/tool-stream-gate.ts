/**
 * Streams answer text until a tool call starts: text is passed on except a possible beginning of a call trigger,
 * which is held until known; from the first trigger on, everything is held (the calls are parsed at the end).
 */

/** Gate of one streamed answer. */
export class ToolStreamGate {
  private readonly triggers: readonly string[];
  private held = '';
  private closed = false;
  /** All text given so far. */
  text = '';

  constructor(triggers: readonly string[]) {
    this.triggers = triggers;
  }

  /** Returns the part of `s` that may be shown now. */
  push(s: string): string {
    this.text += s;
    if (this.closed) return '';
    this.held += s;
    let first = -1;
    for (const t of this.triggers) {
      const i = this.held.indexOf(t);
      if (i >= 0 && (first < 0 || i < first)) first = i;
    }
    if (first >= 0) {
      this.closed = true;
      const out = this.held.slice(0, first);
      this.held = '';
      return out;
    }
    let keep = 0;
    for (const t of this.triggers) {
      for (let n = Math.min(t.length - 1, this.held.length); n > keep; n--) {
        if (t.startsWith(this.held.slice(this.held.length - n))) {
          keep = n;
          break;
        }
      }
    }
    const out = this.held.slice(0, this.held.length - keep);
    this.held = this.held.slice(this.held.length - keep);
    return out;
  }

  /** True once a call started. */
  get calling(): boolean {
    return this.closed;
  }

  /** Held text (no call started). */
  flush(): string {
    const out = this.closed ? '' : this.held;
    this.held = '';
    return out;
  }
}
