/**
 * Keeps the demo's state across reloads in IndexedDB (idb-keyval, its own store, separate from the model store):
 * the conversations (each under its own key, with a list of titles), settings, the last model that loaded
 * successfully, a download left paused and the vision projector (mmproj) each model URL was loaded with. Failures to persist never break the chat: reported once to the console.
 */
import { createStore, del, get, set } from 'idb-keyval';

/** How an answer ended. */
export type AnswerEnd = 'stop' | 'length' | 'aborted' | 'error';

/** A chat message as the demo keeps it. */
export interface StoredMessage {
  readonly role: 'system' | 'user' | 'assistant';
  content: string;
  /** How an assistant answer ended (shown under it, kept across reloads). */
  finish?: AnswerEnd;
  /** A user message's attached image: a downscaled JPEG `data:` URL (bounded size), sent as an `image_url` part. */
  image?: string;
}

/** A conversation as listed in the sidebar. */
export interface ConversationSummary {
  readonly id: string;
  title: string;
  updatedAt: number;
}

/** Chat (the model's template) or plain text completion. */
export type ChatMode = 'chat' | 'completion';

/** Which backend the engine should use. */
type BackendSetting = 'auto' | 'webgpu' | 'wasm';

/** Sampling, prompt and engine settings the user can change. */
export interface DemoSettings {
  systemPrompt: string;
  temperature: number;
  topP: number;
  topK: number;
  maxTokens: number;
  seed: number | null;
  mode: ChatMode;
  backend: BackendSetting;
}

/** Settings used on a first visit and by "Reset settings". */
export const DEFAULT_SETTINGS: Readonly<DemoSettings> = {
  systemPrompt: 'You are a helpful assistant.',
  temperature: 0.7,
  topP: 0.95,
  topK: 40,
  maxTokens: 512,
  seed: null,
  mode: 'chat',
  backend: 'auto',
};

const store = createStore('webgguf-demo', 'state');
let warned = false;
const warn = (e: unknown): void => {
  if (!warned) console.warn('webgguf demo: could not persist state', e);
  warned = true;
};

async function read<T>(key: string, fallback: T): Promise<T> {
  try {
    return ((await get(key, store)) as T | undefined) ?? fallback;
  } catch (e) {
    warn(e);
    return fallback;
  }
}

const write = (key: string, value: unknown): Promise<void> => set(key, value, store).catch(warn);

/** A new conversation id. */
export function newConversationId(): string {
  return `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** A title from the first user message. */
function titleOf(messages: readonly StoredMessage[]): string {
  const first =
    messages
      .find((m) => m.role === 'user')
      ?.content.trim()
      .replace(/\s+/g, ' ') ?? '';
  return first ? (first.length > 48 ? `${first.slice(0, 48)}…` : first) : 'New chat';
}

/** Every conversation, newest first. Moves a conversation saved by older versions (one key) into the list. */
export async function listConversations(): Promise<ConversationSummary[]> {
  const list = await read<ConversationSummary[] | null>('conversations', null);
  if (list) return list.slice().sort((a, b) => b.updatedAt - a.updatedAt);
  const legacy = await read<StoredMessage[]>('conversation', []);
  if (legacy.length === 0) return [];
  const summary = { id: newConversationId(), title: titleOf(legacy), updatedAt: Date.now() };
  await write(`conversation:${summary.id}`, legacy);
  await write('conversations', [summary]);
  await del('conversation', store).catch(warn);
  return [summary];
}

/** The messages of conversation `id` (empty when unknown). */
export function loadConversation(id: string): Promise<StoredMessage[]> {
  return read<StoredMessage[]>(`conversation:${id}`, []);
}

/**
 * Saves conversation `id` (its title follows the first message unless `title` is given, e.g. after a rename). An
 * empty conversation is not listed.
 */
export async function saveConversation(
  id: string,
  messages: readonly StoredMessage[],
  title?: string,
): Promise<ConversationSummary[]> {
  const list = await listConversations();
  const existing = list.find((c) => c.id === id);
  if (messages.length === 0 && !existing) return list;
  await write(`conversation:${id}`, messages);
  if (existing) {
    existing.updatedAt = Date.now();
    if (title !== undefined) existing.title = title;
    else if (existing.title === 'New chat') existing.title = titleOf(messages);
  } else {
    list.unshift({ id, title: title ?? titleOf(messages), updatedAt: Date.now() });
  }
  await write('conversations', list);
  return list;
}

/** Renames conversation `id`. */
export async function renameConversation(id: string, title: string): Promise<ConversationSummary[]> {
  const list = await listConversations();
  const c = list.find((x) => x.id === id);
  if (c) c.title = title.trim() || c.title;
  await write('conversations', list);
  return list;
}

/** Deletes conversation `id`. */
export async function deleteConversation(id: string): Promise<ConversationSummary[]> {
  const list = (await listConversations()).filter((c) => c.id !== id);
  await write('conversations', list);
  await del(`conversation:${id}`, store).catch(warn);
  return list;
}

/** The conversation open last. */
export const loadCurrentConversationId = (): Promise<string | null> => read<string | null>('currentConversation', null);
/** Remembers the open conversation. */
export const saveCurrentConversationId = (id: string): Promise<void> => write('currentConversation', id);

/** Loads settings merged over the defaults. */
export async function loadSettings(): Promise<DemoSettings> {
  return { ...DEFAULT_SETTINGS, ...(await read<Partial<DemoSettings>>('settings', {})) };
}

/** Saves settings. */
export const saveSettings = (settings: DemoSettings): Promise<void> => write('settings', settings);

/** Remembers the last model that LOADED successfully (URL, or null for a local file, which cannot be reopened). */
export const saveLastModel = (url: string | null): Promise<void> => write('lastModel', url);

/** The last model URL that loaded successfully, if any. */
export const loadLastModel = (): Promise<string | null> => read<string | null>('lastModel', null);

/** Remembers a download that was paused or interrupted, to offer resuming it (null: none). */
export const savePendingDownload = (url: string | null): Promise<void> => write('pendingDownload', url);

/** The download left paused, if any. */
export const loadPendingDownload = (): Promise<string | null> => read<string | null>('pendingDownload', null);

/** The vision projector (mmproj URL) each model URL was loaded with, for models outside the catalogue. */
export const loadProjectors = (): Promise<Record<string, string>> => read<Record<string, string>>('projectors', {});

/** Remembers that model `url` goes with projector `mmproj`. */
export async function saveProjector(url: string, mmproj: string): Promise<void> {
  const all = await loadProjectors();
  if (all[url] !== mmproj) await write('projectors', { ...all, [url]: mmproj });
}
