/**
 * Keeps the demo's conversation and settings across reloads in IndexedDB (idb-keyval, its own store, separate from
 * the model store). Failures to persist never break the chat: they are reported once to the console.
 */
import { createStore, get, set } from 'idb-keyval';

/** A chat message as the demo keeps it. */
export interface StoredMessage {
  readonly role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Sampling and prompt settings the user can change. */
export interface DemoSettings {
  systemPrompt: string;
  temperature: number;
  topP: number;
  topK: number;
  maxTokens: number;
  seed: number | null;
}

/** Settings used on a first visit. */
export const DEFAULT_SETTINGS: DemoSettings = {
  systemPrompt: 'You are a helpful assistant.',
  temperature: 0.7,
  topP: 0.95,
  topK: 40,
  maxTokens: 512,
  seed: null,
};

const store = createStore('webgguf-demo', 'state');
let warned = false;
const warn = (e: unknown) => {
  if (!warned) console.warn('webgguf demo: could not persist state', e);
  warned = true;
};

/** Loads the saved conversation (empty when none). */
export async function loadConversation(): Promise<StoredMessage[]> {
  try {
    return ((await get('conversation', store)) as StoredMessage[] | undefined) ?? [];
  } catch (e) {
    warn(e);
    return [];
  }
}

/** Saves the conversation. */
export async function saveConversation(messages: readonly StoredMessage[]): Promise<void> {
  await set('conversation', messages, store).catch(warn);
}

/** Loads settings merged over the defaults. */
export async function loadSettings(): Promise<DemoSettings> {
  try {
    const saved = (await get('settings', store)) as Partial<DemoSettings> | undefined;
    return { ...DEFAULT_SETTINGS, ...saved };
  } catch (e) {
    warn(e);
    return { ...DEFAULT_SETTINGS };
  }
}

/** Saves settings. */
export async function saveSettings(settings: DemoSettings): Promise<void> {
  await set('settings', settings, store).catch(warn);
}

/** Remembers the last model used (URL, or null for a local file). */
export async function saveLastModel(url: string | null): Promise<void> {
  await set('lastModel', url, store).catch(warn);
}

/** The last model URL used, if any. */
export async function loadLastModel(): Promise<string | null> {
  try {
    return ((await get('lastModel', store)) as string | null | undefined) ?? null;
  } catch (e) {
    warn(e);
    return null;
  }
}
