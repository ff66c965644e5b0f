/**
 * Draws the conversation: one list item per message (user text escaped, assistant text as sanitised Markdown with a
 * collapsible "Thinking" block for `<think>…</think>`; a user message's attached image as a thumbnail), message actions (copy; edit-and-resend on questions;
 * regenerate on answers), the note under an answer that did not end normally (kept with the message, so it survives
 * reloads and re-renders), and cheap in-place updates of the streaming answer. The list itself is not a live region:
 * finished answers are announced once through a separate polite status. Knows nothing of the engine.
 */
import { escapeHtml, highlightCode, renderMarkdown } from './markdown';
import type { AnswerEnd, StoredMessage } from './conversation-store';

export type { AnswerEnd } from './conversation-store';

/** What the message buttons do. */
export interface ChatViewActions {
  edit(index: number): void;
  regenerate(index: number): void;
}

/** The note shown under an answer that ended `end`. */
export function finishNote(end: AnswerEnd | undefined): string {
  return end === 'aborted' ? 'stopped' : end === 'length' ? 'reached the token limit' : end === 'error' ? 'failed' : '';
}

/** Splits `<think>…</think>` reasoning (possibly still open while streaming) from the answer. */
export function splitThinking(text: string): { thinking: string | null; answer: string; open: boolean } {
  const m = /^\s*<think>([\s\S]*?)(<\/think>|$)/.exec(text);
  if (m) return { thinking: m[1].trim(), answer: text.slice(m[0].length).replace(/^\s+/, ''), open: m[2] === '' };
  // Templates that open the block themselves (the prompt ends with "<think>"): the answer starts inside it.
  const end = text.indexOf('</think>');
  if (end >= 0 && !text.slice(0, end).includes('<think>')) {
    return { thinking: text.slice(0, end).trim(), answer: text.slice(end + 8).replace(/^\s+/, ''), open: false };
  }
  return { thinking: null, answer: text, open: false };
}

/** The message list element, a polite status for announcements, and the callbacks of the buttons. */
export class ChatView {
  constructor(
    private readonly list: HTMLOListElement,
    private readonly announcer: HTMLElement,
    private readonly actions: ChatViewActions,
  ) {}

  /** Redraws every message. */
  render(messages: readonly StoredMessage[]): void {
    this.list.replaceChildren(...messages.map((m, i) => this.item(m, i)));
    this.scrollToEnd();
  }

  /** Appends a new message and returns its element. */
  append(message: StoredMessage, index: number): HTMLLIElement {
    const li = this.item(message, index);
    this.list.append(li);
    this.scrollToEnd();
    return li;
  }

  /** Replaces the body of a streaming answer (throttled by the caller's frame rate). */
  update(li: HTMLLIElement, markdown: string): void {
    const body = li.querySelector('.content') as HTMLElement;
    const nearEnd = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 80;
    this.fillAnswer(body, markdown, li.dataset.done !== 'true');
    if (nearEnd) this.scrollToEnd();
  }

  /** Marks an answer finished (`data-done`, `data-finish`), shows its note and announces it. */
  finish(li: HTMLLIElement, message: StoredMessage): void {
    li.dataset.done = 'true';
    li.dataset.finish = message.finish ?? 'stop';
    li.setAttribute('aria-busy', 'false');
    this.fillAnswer(li.querySelector('.content') as HTMLElement, message.content, false);
    li.querySelector('.note')?.remove();
    const note = finishNote(message.finish);
    if (note) li.append(this.note(note));
    const answer = splitThinking(message.content).answer.trim();
    const spoken = answer.length > 300 ? `${answer.slice(0, 300)}…` : answer;
    this.announcer.textContent = `Answer${note ? ` (${note})` : ''}: ${spoken || '(empty)'}`;
  }

  private note(text: string): HTMLParagraphElement {
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = `— ${text}`;
    return p;
  }

  private fillAnswer(body: HTMLElement, text: string, streaming: boolean): void {
    const { thinking, answer, open } = splitThinking(text);
    let html = '';
    if (thinking !== null) {
      html += `<details class="thinking"${open && streaming ? ' open' : ''}><summary>${open && streaming ? 'Thinking…' : 'Thought process'}</summary>${renderMarkdown(thinking)}</details>`;
    }
    body.innerHTML = html + renderMarkdown(answer);
    decorateCode(body);
    if (!streaming) void highlightCode(body);
  }

  private item(m: StoredMessage, index: number): HTMLLIElement {
    const li = document.createElement('li');
    li.className = `message ${m.role}`;
    li.dataset.index = String(index);
    const head = document.createElement('div');
    head.className = 'role';
    const who = document.createElement('span');
    who.textContent = m.role === 'user' ? 'You' : m.role === 'assistant' ? 'Assistant' : 'System';
    const tools = document.createElement('span');
    tools.className = 'tools';
    tools.append(
      button('Copy', m.role === 'user' ? 'Copy this message' : 'Copy this answer', (b) => void copyText(b, m.content)),
    );
    if (m.role === 'user') tools.append(button('Edit', 'Edit this message and resend', () => this.actions.edit(index)));
    if (m.role === 'assistant')
      tools.append(button('Regenerate', 'Regenerate this answer', () => this.actions.regenerate(index)));
    head.append(who, tools);
    const body = document.createElement('div');
    body.className = 'content';
    li.append(head, body);
    if (m.role === 'assistant') {
      li.dataset.done = 'true';
      if (m.finish) li.dataset.finish = m.finish;
      this.fillAnswer(body, m.content, false);
      const note = finishNote(m.finish);
      if (note) li.append(this.note(note));
    } else {
      body.innerHTML = `<p>${escapeHtml(m.content).replace(/\n/g, '<br>')}</p>`;
      if (m.image?.startsWith('data:image/')) {
        const img = document.createElement('img');
        img.className = 'thumb';
        img.src = m.image;
        img.alt = 'Attached image';
        body.prepend(img);
      }
    }
    return li;
  }

  private scrollToEnd(): void {
    this.list.scrollTop = this.list.scrollHeight;
  }
}

function button(text: string, label: string, onClick: (b: HTMLButtonElement) => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'link-button';
  b.textContent = text;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', () => onClick(b));
  return b;
}

/** Copies `text`, confirming on the button for a moment. */
async function copyText(b: HTMLButtonElement, text: string): Promise<void> {
  const before = b.textContent;
  try {
    await navigator.clipboard.writeText(text);
    b.textContent = 'Copied';
  } catch {
    b.textContent = 'Copy failed';
  }
  setTimeout(() => (b.textContent = before), 1500);
}

/** Adds a copy button to every code block of a rendered answer. */
function decorateCode(body: HTMLElement): void {
  for (const pre of body.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    if (!code || pre.querySelector('.copy-code')) continue;
    const b = button('Copy code', 'Copy this code', (btn) => void copyText(btn, code.textContent ?? ''));
    b.classList.add('copy-code');
    pre.prepend(b);
  }
}
