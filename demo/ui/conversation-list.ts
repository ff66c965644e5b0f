/**
 * The conversations in the sidebar: open one, rename it, delete it (with confirmation), and export the open one as
 * Markdown or JSON. Kept in IndexedDB through conversation-store.
 */
import type { ChatController } from './chat-controller';
import {
  deleteConversation,
  listConversations,
  loadCurrentConversationId,
  renameConversation,
  type ConversationSummary,
  type StoredMessage,
} from './conversation-store';

/** The conversation as Markdown: a heading per message (an attached image inline, as its data: URL). */
function conversationMarkdown(title: string, messages: readonly StoredMessage[]): string {
  const who = (m: StoredMessage): string =>
    m.role === 'user' ? 'You' : m.role === 'assistant' ? 'Assistant' : 'System';
  const body = messages.map(
    (m) =>
      `## ${who(m)}\n\n${m.image ? `![Attached image](${m.image})\n\n` : ''}${m.content}${m.finish && m.finish !== 'stop' ? `\n\n*(${m.finish})*` : ''}`,
  );
  return [`# ${title}`, ...body].join('\n\n') + '\n';
}

function download(name: string, type: string, text: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 5000);
}

/** The sidebar list of conversations. */
export class ConversationList {
  private items: ConversationSummary[] = [];

  constructor(
    private readonly list: HTMLUListElement,
    private readonly chat: ChatController,
  ) {
    document.getElementById('export-md')?.addEventListener('click', () => this.export('md'));
    document.getElementById('export-json')?.addEventListener('click', () => this.export('json'));
  }

  /** Opens the conversation used last and draws the list. */
  async start(): Promise<void> {
    this.items = await listConversations();
    const current = await loadCurrentConversationId();
    const pick = this.items.find((c) => c.id === current) ?? this.items[0];
    if (pick) await this.chat.open(pick.id);
    else this.chat.newChat();
    this.draw();
  }

  /** Redraws from the store (after a save). */
  async refresh(): Promise<void> {
    this.items = await listConversations();
    this.draw();
  }

  private title(): string {
    return this.items.find((c) => c.id === this.chat.conversationId)?.title ?? 'New chat';
  }

  private export(kind: 'md' | 'json'): void {
    const title = this.title();
    const base =
      title
        .replace(/[^\w -]+/g, '')
        .trim()
        .replace(/\s+/g, '-')
        .slice(0, 40) || 'chat';
    if (kind === 'md') download(`${base}.md`, 'text/markdown', conversationMarkdown(title, this.chat.conversation));
    else
      download(
        `${base}.json`,
        'application/json',
        JSON.stringify({ title, messages: this.chat.conversation }, null, 2),
      );
  }

  private draw(): void {
    const rows = this.items.map((c) => this.row(c));
    if (rows.length === 0) {
      const li = document.createElement('li');
      li.className = 'hint';
      li.textContent = 'Your conversations appear here.';
      rows.push(li);
    }
    this.list.replaceChildren(...rows);
  }

  private row(c: ConversationSummary): HTMLLIElement {
    const li = document.createElement('li');
    const current = c.id === this.chat.conversationId;
    if (current) li.setAttribute('aria-current', 'true');
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'conversation-title';
    open.textContent = c.title;
    open.addEventListener('click', () => void this.chat.open(c.id).then(() => this.draw()));
    const rename = document.createElement('button');
    rename.type = 'button';
    rename.textContent = 'Rename';
    rename.setAttribute('aria-label', `Rename “${c.title}”`);
    rename.addEventListener('click', () => this.renameRow(li, c));
    const del = document.createElement('button');
    del.type = 'button';
    del.textContent = 'Delete';
    del.setAttribute('aria-label', `Delete “${c.title}”`);
    del.addEventListener('click', () => {
      const yes = document.createElement('button');
      yes.type = 'button';
      yes.className = 'danger';
      yes.textContent = 'Delete';
      yes.setAttribute('aria-label', `Confirm deleting “${c.title}”`);
      const no = document.createElement('button');
      no.type = 'button';
      no.textContent = 'Cancel';
      no.addEventListener('click', () => this.draw());
      yes.addEventListener('click', async () => {
        this.items = await deleteConversation(c.id);
        if (current) {
          const next = this.items[0];
          if (next) await this.chat.open(next.id);
          else this.chat.newChat();
        }
        this.draw();
      });
      li.replaceChildren(open, yes, no);
      no.focus();
    });
    li.append(open, rename, del);
    return li;
  }

  private renameRow(li: HTMLLIElement, c: ConversationSummary): void {
    const form = document.createElement('form');
    const input = document.createElement('input');
    input.value = c.title;
    input.setAttribute('aria-label', 'New name');
    const ok = document.createElement('button');
    ok.type = 'submit';
    ok.textContent = 'Save';
    form.append(input, ok);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      this.items = await renameConversation(c.id, input.value);
      this.draw();
    });
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') {
        ev.stopPropagation();
        this.draw();
      }
    });
    li.replaceChildren(form);
    input.focus();
    input.select();
  }
}
