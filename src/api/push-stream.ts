/**
 * `PushStream`: the async iterable behind every streamed response. The engine pushes chunks as it produces them
 * (it never waits for the reader, so an abandoned stream cannot stall the request queue); the reader pulls them
 * with `for await`. Leaving the loop early (`return()`) cancels the request.
 */

/** A single-consumer async iterable fed by `push` / `end` / `fail`. */
export class PushStream<T> implements AsyncIterableIterator<T> {
  private readonly buffer: T[] = [];
  private finished = false;
  /** The reader has seen the end (done or the error). */
  private drained = false;
  private failure: { error: unknown } | null = null;
  private wake: (() => void) | null = null;
  private readonly onCancel: (() => void) | undefined;

  /** `onCancel` runs when the reader stops early (break / return). */
  constructor(onCancel?: () => void) {
    this.onCancel = onCancel;
  }

  /** Adds a chunk (ignored after end/fail). */
  push(value: T): void {
    if (this.finished || this.failure) return;
    this.buffer.push(value);
    this.notify();
  }

  /** Ends the stream after the buffered chunks. */
  end(): void {
    this.finished = true;
    this.notify();
  }

  /** Ends the stream with an error, delivered after the buffered chunks. */
  fail(error: unknown): void {
    if (this.finished) return;
    this.failure = { error };
    this.notify();
  }

  /** Ends the stream with `error` now, dropping chunks not yet read (the reader's abort). */
  abort(error: unknown): void {
    if (this.drained) return;
    this.buffer.length = 0;
    this.finished = false;
    this.failure = { error };
    this.notify();
  }

  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.buffer.length > 0) return { value: this.buffer.shift() as T, done: false };
      if (this.failure) {
        const { error } = this.failure;
        this.finished = true;
        this.drained = true;
        this.failure = null;
        throw error;
      }
      if (this.finished) {
        this.drained = true;
        return { value: undefined, done: true };
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  async return(): Promise<IteratorResult<T>> {
    this.drained = true;
    if (!this.finished) {
      this.finished = true;
      this.buffer.length = 0;
      this.failure = null;
      this.onCancel?.();
    }
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }
}
