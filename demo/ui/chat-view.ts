/**
 * Draws the conversation: one list item per message (user text escaped, assistant text as sanitised Markdown), an
 * "Edit" button on user messages, and cheap in-place updates of the streaming answer. Knows nothing of the engine.
 */
import { escapeHtml, renderMarkdown } from './markdown';
import type { StoredMessage } from './conversation-store';

/** How a finished answer ended, shown under it. */
export type AnswerEnd = 'stop' | 'length' | 'aborted' | 'error';

/** The message list element and the callbacks of its buttons. */
export class ChatView {
  constructor(
    private readonly list: HTMLOListElement,
    private readonly onEdit: (index: number) => void,
  ) {}

  /** Redraws every message. */
  render(messages: readonly StoredMessage[]): void {
    this.list.replaceChildren(...messages.map((m, i) => this.item(m, i)));
    if (messages.length === 0) {
      const li = document.createElement('li');
      li.className = 'empty';
      li.textContent = 'No messages yet. Load a model, then ask something.';
      this.list.append(li);
    }
    this.scrollToEnd();
  }

  /** Appends a new message and returns its element. */
  append(message: StoredMessage, index: number): HTMLLIElement {
    this.list.querySelector('li.empty')?.remove();
    const li = this.item(message, index);
    this.list.append(li);
    this.scrollToEnd();
    return li;
  }

  /** Replaces the body of a streaming answer (throttled by the caller's frame rate). */
  update(li: HTMLLIElement, markdown: string): void {
    const body = li.querySelector('.content') as HTMLElement;
    const nearEnd = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 80;
    body.innerHTML = renderMarkdown(markdown);
    if (nearEnd) this.scrollToEnd();
  }

  /** Marks an answer finished (`data-done`, `data-finish`) and shows a note when it did not end normally. */
  finish(li: HTMLLIElement, end: AnswerEnd, note?: string): void {
    li.dataset.done = 'true';
    li.dataset.finish = end;
    li.setAttribute('aria-busy', 'false');
    const text = note ?? (end === 'aborted' ? 'stopped' : end === 'length' ? 'reached the token limit' : end === 'error' ? 'failed' : '');
    if (text) {
      const p = document.createElement('p');
      p.className = 'note';
      p.textContent = `— ${text}`;
      li.append(p);
    }
  }

  private item(m: StoredMessage, index: number): HTMLLIElement {
    const li = document.createElement('li');
    li.className = `message ${m.role}`;
    li.dataset.index = String(index);
    const head = document.createElement('div');
    head.className = 'role';
    const who = document.createElement('span');
    who.textContent = m.role === 'user' ? 'You' : m.role === 'assistant' ? 'Assistant' : 'System';
    head.append(who);
    if (m.role === 'user') {
      const edit = document.createElement('button');
      edit.type = 'button';
      edit.className = 'link-button';
      edit.textContent = 'Edit';
      edit.setAttribute('aria-label', 'Edit this message and resend');
      edit.addEventListener('click', () => this.onEdit(index));
      head.append(edit);
    }
    const body = document.createElement('div');
    body.className = 'content';
    body.innerHTML = m.role === 'assistant' ? renderMarkdown(m.content) : `<p>${escapeHtml(m.content).replace(/\n/g, '<br>')}</p>`;
    li.append(head, body);
    if (m.role === 'assistant') li.dataset.done = 'true';
    return li;
  }

  private scrollToEnd(): void {
    this.list.scrollTop = this.list.scrollHeight;
  }
}
