/**
 * The error box above the conversation: the plain sentence first, what to do next, the technical message behind a
 * "Details" disclosure, and a button to dismiss it.
 */
import { explainError, type ErrorText } from './error-text';

/** Shows and hides errors in one `role="alert"` element. */
export class ErrorBox {
  private shown: unknown = null;

  constructor(private readonly box: HTMLElement) {}

  /** The error on display (null when none). */
  get current(): unknown {
    return this.shown;
  }

  /** Shows `e` (aborts are ignored); returns what was shown. */
  show(e: unknown): ErrorText | null {
    const t = explainError(e, { online: navigator.onLine });
    if (t === null) return null;
    console.error(e);
    const summary = document.createElement('p');
    summary.className = 'error-summary';
    summary.textContent = t.summary;
    const parts: HTMLElement[] = [summary];
    if (t.advice) {
      const advice = document.createElement('p');
      advice.className = 'error-advice';
      advice.textContent = t.advice;
      parts.push(advice);
    }
    const details = document.createElement('details');
    const label = document.createElement('summary');
    label.textContent = 'Details';
    const pre = document.createElement('pre');
    pre.textContent = t.details;
    details.append(label, pre);
    parts.push(details);
    const close = document.createElement('button');
    close.type = 'button';
    close.className = 'dismiss';
    close.textContent = '×';
    close.setAttribute('aria-label', 'Dismiss this message');
    close.addEventListener('click', () => this.clear());
    this.box.replaceChildren(close, ...parts);
    this.box.dataset.kind = t.kind;
    this.box.hidden = false;
    this.shown = e;
    return t;
  }

  /** Hides the box. */
  clear(): void {
    this.shown = null;
    this.box.hidden = true;
    this.box.replaceChildren();
    delete this.box.dataset.kind;
  }
}
