/**
 * The conversation being shown and the answer being streamed: send, stop, regenerate (the last answer or any one),
 * edit-and-resend, "New chat" with undo, the stats line (first-token latency and the real decode speed of THIS
 * answer, counted from its own tokens and clock — never the engine's lifetime average) and the context meter.
 * Persists through conversation-store; draws through ChatView.
 */
import { isLlmError, type ChatRequestMessage, type Engine } from '../../src/index';
import { ChatView } from './chat-view';
import type { ImageAttachment } from './image-attach';
import { speedText } from './status-text';
import {
  loadConversation,
  newConversationId,
  saveConversation,
  saveCurrentConversationId,
  type AnswerEnd,
  type DemoSettings,
  type StoredMessage,
} from './conversation-store';

/** The elements the controller drives. */
interface ChatElements {
  readonly list: HTMLOListElement;
  readonly announcer: HTMLElement;
  readonly prompt: HTMLTextAreaElement;
  readonly composer: HTMLFormElement;
  readonly send: HTMLButtonElement;
  readonly stop: HTMLButtonElement;
  readonly regenerate: HTMLButtonElement;
  readonly clear: HTMLButtonElement;
  readonly stats: HTMLElement;
  readonly meter: HTMLElement;
  readonly undo: HTMLElement;
  readonly undoButton: HTMLButtonElement;
}

/** What the controller needs from the page. */
export interface ChatHooks {
  readonly els: ChatElements;
  engine(): Engine | null;
  settings(): DemoSettings;
  error(e: unknown): void;
  clearError(): void;
  /** The conversation list changed (new title, new conversation). */
  changed(): void;
  /** The composer's image attachment (sent with the next message as an `image_url` part). */
  readonly attachment?: ImageAttachment;
}

/** A stored message as the request sends it: a user message's image first, then its text. */
function requestMessage(m: StoredMessage): ChatRequestMessage {
  if (m.role !== 'user' || m.image === undefined) return { role: m.role, content: m.content };
  return {
    role: 'user',
    content: [
      { type: 'image_url', image_url: { url: m.image } },
      { type: 'text', text: m.content },
    ],
  };
}

/** Conversation state, streaming and the composer. */
export class ChatController {
  private messages: StoredMessage[] = [];
  private id = newConversationId();
  private generation: AbortController | null = null;
  private undoState: { id: string; messages: StoredMessage[] } | null = null;
  private undoTimer = 0;
  private readonly view: ChatView;

  constructor(private readonly hooks: ChatHooks) {
    const e = hooks.els;
    this.view = new ChatView(e.list, e.announcer, {
      edit: (i) => this.editAndResend(i),
      regenerate: (i) => this.regenerateAt(i),
    });
    e.composer.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.send();
    });
    e.prompt.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        this.send();
      }
    });
    e.stop.addEventListener('click', () => this.stopGenerating());
    e.regenerate.addEventListener('click', () => {
      const last = this.messages.map((m) => m.role).lastIndexOf('assistant');
      if (last >= 0) this.regenerateAt(last);
      else if (this.messages.some((m) => m.role === 'user')) void this.respond();
    });
    e.clear.addEventListener('click', () => this.newChat());
    e.undoButton.addEventListener('click', () => void this.undoNewChat());
  }

  /** True while an answer streams. */
  get generating(): boolean {
    return this.generation !== null;
  }

  /** The open conversation's id. */
  get conversationId(): string {
    return this.id;
  }

  /** The open conversation's messages (read-only view, for export). */
  get conversation(): readonly StoredMessage[] {
    return this.messages;
  }

  /** Opens conversation `id` (stopping any answer). */
  async open(id: string): Promise<void> {
    this.stopGenerating();
    this.id = id;
    this.messages = await loadConversation(id);
    await saveCurrentConversationId(id);
    this.view.render(this.messages);
    this.hooks.els.stats.textContent = '';
    this.setBusy(false);
    void this.updateMeter();
  }

  /** Stops the answer being generated, if any. */
  stopGenerating(): void {
    this.generation?.abort();
  }

  /** The engine was loaded, replaced or unloaded. */
  engineChanged(): void {
    this.hooks.attachment?.showNote(null); // a refusal was about the previous model
    this.setBusy(this.generating);
    void this.updateMeter();
  }

  focus(): void {
    if (!this.hooks.els.prompt.disabled) this.hooks.els.prompt.focus();
  }

  /** Starts an empty conversation; the previous one can be brought back with Undo for a few seconds. */
  newChat(): void {
    this.stopGenerating();
    if (this.messages.length) {
      this.undoState = { id: this.id, messages: this.messages };
      this.hooks.els.undo.hidden = false;
      clearTimeout(this.undoTimer);
      this.undoTimer = window.setTimeout(() => this.hideUndo(), 10_000);
    }
    this.id = newConversationId();
    this.messages = [];
    void saveCurrentConversationId(this.id);
    this.view.render(this.messages);
    this.hooks.els.stats.textContent = '';
    this.setBusy(false);
    void this.updateMeter();
    this.hooks.changed();
    this.focus();
  }

  private hideUndo(): void {
    this.hooks.els.undo.hidden = true;
    this.undoState = null;
  }

  private async undoNewChat(): Promise<void> {
    const state = this.undoState;
    this.hideUndo();
    if (!state) return;
    await this.open(state.id);
    this.hooks.changed();
  }

  private setBusy(busy: boolean): void {
    const e = this.hooks.els;
    const ready = this.hooks.engine() !== null;
    e.send.disabled = busy || !ready;
    e.prompt.disabled = !ready;
    e.stop.disabled = !busy;
    e.regenerate.disabled = busy || !ready || !this.messages.some((m) => m.role === 'user');
    document.body.dataset.busy = String(busy);
    for (const b of e.list.querySelectorAll<HTMLButtonElement>('.tools button:not([aria-label^="Copy"])'))
      b.disabled = busy || !ready;
  }

  private async save(): Promise<void> {
    await saveConversation(this.id, this.messages);
    await saveCurrentConversationId(this.id);
    this.hooks.changed();
  }

  private send(): void {
    const e = this.hooks.els;
    const text = e.prompt.value.trim();
    const image = this.hooks.attachment?.image ?? null;
    if ((!text && image === null) || !this.hooks.engine() || this.generation) return;
    this.hideUndo();
    this.messages.push({ role: 'user', content: text, ...(image !== null ? { image } : {}) });
    this.view.append(this.messages[this.messages.length - 1], this.messages.length - 1);
    e.prompt.value = '';
    this.hooks.attachment?.set(null);
    this.hooks.attachment?.showNote(null);
    void this.respond();
  }

  private editAndResend(index: number): void {
    this.stopGenerating();
    const e = this.hooks.els;
    e.prompt.value = this.messages[index].content;
    this.hooks.attachment?.set(this.messages[index].image ?? null);
    this.messages = this.messages.slice(0, index);
    this.view.render(this.messages);
    void this.save();
    this.setBusy(false);
    e.prompt.focus();
    e.prompt.setSelectionRange(e.prompt.value.length, e.prompt.value.length);
  }

  /** Drops answer `index` and everything after it, then answers again. */
  private regenerateAt(index: number): void {
    if (this.generation || !this.hooks.engine()) return;
    this.messages = this.messages.slice(0, index);
    this.view.render(this.messages);
    void this.respond();
  }

  /** Streams the assistant's answer to the conversation so far. */
  private async respond(): Promise<void> {
    const current = this.hooks.engine();
    if (!current || this.generation) return;
    this.hooks.clearError();
    const settings = this.hooks.settings();
    const controller = new AbortController();
    this.generation = controller;
    const history = this.messages.slice();
    const answer: StoredMessage = { role: 'assistant', content: '' };
    this.messages.push(answer);
    const li = this.view.append(answer, this.messages.length - 1);
    li.dataset.done = 'false';
    li.setAttribute('aria-busy', 'true');
    this.setBusy(true);
    const sampling = {
      temperature: settings.temperature,
      top_p: settings.topP,
      top_k: settings.topK,
      max_tokens: settings.maxTokens,
      ...(settings.seed !== null ? { seed: settings.seed } : {}),
      signal: controller.signal,
    };
    const started = performance.now();
    let firstAt = 0;
    let lastAt = 0;
    let end: AnswerEnd = 'stop';
    let usage: { completion_tokens: number; prompt_tokens: number; cached: number } | null = null;
    let frame = 0;
    try {
      const stream =
        settings.mode === 'completion'
          ? await current.completions.create({
              prompt: history.map((m) => m.content).join(''),
              stream: true,
              ...sampling,
            })
          : await current.chat.completions.create({
              messages: [
                ...(settings.systemPrompt.trim() ? [{ role: 'system' as const, content: settings.systemPrompt }] : []),
                ...history.map(requestMessage),
              ],
              stream: true,
              ...sampling,
            });
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        const piece = choice === undefined ? '' : 'delta' in choice ? (choice.delta.content ?? '') : choice.text;
        if (piece) {
          lastAt = performance.now();
          if (firstAt === 0) firstAt = lastAt;
        }
        answer.content += piece;
        if (choice?.finish_reason) end = choice.finish_reason === 'tool_calls' ? 'stop' : choice.finish_reason;
        if (chunk.usage) {
          usage = {
            completion_tokens: chunk.usage.completion_tokens,
            prompt_tokens: chunk.usage.prompt_tokens,
            cached: chunk.usage.prompt_tokens_details.cached_tokens,
          };
        }
        if (!frame) frame = requestAnimationFrame(() => ((frame = 0), this.view.update(li, answer.content)));
      }
    } catch (e) {
      end = controller.signal.aborted ? 'aborted' : 'error';
      if (this.refusedImage(e, history)) return; // `finally` still saves and ends the generation
      this.hooks.error(e);
    } finally {
      if (frame) cancelAnimationFrame(frame);
      answer.finish = end;
      this.view.finish(li, answer);
      this.generation = null;
      this.setBusy(false);
      await this.save();
    }
    // An answer stopped early has no usage: count its tokens with the model's tokenizer.
    const tokens =
      usage?.completion_tokens ??
      (answer.content
        ? await current.tokenize(answer.content, { addSpecial: false }).then(
            (t) => t.length,
            () => 0,
          )
        : 0);
    const parts: string[] = [];
    if (firstAt) parts.push(`first token ${Math.round(firstAt - started)} ms`);
    else if (end === 'aborted') parts.push('stopped before the first token');
    const speed = speedText(tokens, firstAt, lastAt);
    if (speed) parts.push(speed);
    else if (tokens === 1) parts.push('1 token');
    if (usage) parts.push(`prompt ${usage.prompt_tokens} tokens, ${usage.cached} reused from cache`);
    this.hooks.els.stats.textContent = parts.join(' · ');
    await this.updateMeter(usage ? usage.prompt_tokens + usage.completion_tokens : undefined);
    this.focus();
  }

  /**
   * A request whose images the engine refused (a model loaded without its vision projector): the question goes back
   * into the composer with its image and the library's reason shows inline under it. True when `e` was that.
   */
  private refusedImage(e: unknown, history: readonly StoredMessage[]): boolean {
    const attachment = this.hooks.attachment;
    const last = history[history.length - 1];
    if (
      !attachment ||
      !isLlmError(e, 'invalid-request') ||
      e.details?.images === undefined ||
      last?.image === undefined
    )
      return false;
    this.messages = history.slice(0, -1);
    this.view.render(this.messages);
    void this.save();
    this.hooks.els.prompt.value = last.content;
    attachment.set(last.image);
    attachment.showNote(e.message);
    return true;
  }

  /** "used / context tokens": from the last answer's usage, else counted with the tokenizer. */
  private async updateMeter(used?: number): Promise<void> {
    const engine = this.hooks.engine();
    const meter = this.hooks.els.meter;
    if (!engine) {
      meter.textContent = '';
      return;
    }
    const n =
      used ??
      (this.messages.length
        ? await engine.tokenize(this.messages.map((m) => m.content).join('\n')).then(
            (t) => t.length,
            () => 0,
          )
        : 0);
    const ctx = engine.info.contextLength;
    meter.textContent = `${used === undefined && n ? '≈ ' : ''}${n} / ${ctx} tokens`;
    meter.dataset.level = n > 0.9 * ctx ? 'full' : n > 0.7 * ctx ? 'high' : 'ok';
  }
}
