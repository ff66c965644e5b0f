/**
 * The demo chat: wires the model panel (pick / download / open a GGUF), a Web Worker engine, and the conversation
 * (streamed, sanitised Markdown; stop, regenerate, edit-and-resend; kept across reloads). Imports the public API only.
 * URL parameters: ?model=<url> (load at start), ?backend=auto|webgpu|wasm, ?raw=1 (plain text completion, no chat
 * template), ?temperature=, ?max_tokens=, ?seed= (override the saved sampling settings, e.g. for greedy tests).
 */
import { createWorkerEngine, listModels, type BackendChoice, type Engine } from '../src/index';
import { ChatView, type AnswerEnd } from './ui/chat-view';
import {
  loadConversation,
  loadLastModel,
  loadSettings,
  saveConversation,
  saveLastModel,
  saveSettings,
  type DemoSettings,
  type StoredMessage,
} from './ui/conversation-store';
import { ModelPanel } from './ui/model-panel';
import { backendLabel, describeError } from './ui/status-text';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);
const backend = (['auto', 'webgpu', 'wasm', 'cpu'].includes(params.get('backend') ?? '') ? params.get('backend') : 'auto') as BackendChoice;
const rawMode = params.get('raw') === '1';

const ui = {
  systemPrompt: $<HTMLTextAreaElement>('system-prompt'),
  temperature: $<HTMLInputElement>('temperature'),
  topP: $<HTMLInputElement>('top-p'),
  topK: $<HTMLInputElement>('top-k'),
  maxTokens: $<HTMLInputElement>('max-tokens'),
  seed: $<HTMLInputElement>('seed'),
  stats: $<HTMLParagraphElement>('stats'),
  error: $<HTMLDivElement>('error'),
  composer: $<HTMLFormElement>('composer'),
  prompt: $<HTMLTextAreaElement>('prompt'),
  send: $<HTMLButtonElement>('send'),
  stop: $<HTMLButtonElement>('stop'),
  regenerate: $<HTMLButtonElement>('regenerate'),
  clear: $<HTMLButtonElement>('clear'),
  badge: $<HTMLSpanElement>('backend-badge'),
  sidebar: $<HTMLElement>('sidebar'),
  toggleSidebar: $<HTMLButtonElement>('toggle-sidebar'),
  mode: $<HTMLElement>('mode-note'),
};

let engine: Engine | null = null;
let conversation: StoredMessage[] = [];
let generation: AbortController | null = null;
const view = new ChatView($<HTMLOListElement>('messages'), (i) => editAndResend(i));

function showError(e: unknown): void {
  const text = describeError(e);
  if (text === null) return;
  console.error(e);
  ui.error.textContent = text;
  ui.error.hidden = false;
}

function clearError(): void {
  ui.error.hidden = true;
  ui.error.textContent = '';
}

function readSettings(): DemoSettings {
  const num = (el: HTMLInputElement, fallback: number): number => (Number.isFinite(el.valueAsNumber) ? el.valueAsNumber : fallback);
  return {
    systemPrompt: ui.systemPrompt.value,
    temperature: Math.max(0, num(ui.temperature, 0.7)),
    topP: Math.min(1, Math.max(0, num(ui.topP, 0.95))),
    topK: Math.max(0, Math.round(num(ui.topK, 40))),
    maxTokens: Math.max(1, Math.round(num(ui.maxTokens, 512))),
    seed: Number.isFinite(ui.seed.valueAsNumber) ? Math.round(ui.seed.valueAsNumber) : null,
  };
}

function writeSettings(s: DemoSettings): void {
  ui.systemPrompt.value = s.systemPrompt;
  ui.temperature.value = String(s.temperature);
  ui.topP.value = String(s.topP);
  ui.topK.value = String(s.topK);
  ui.maxTokens.value = String(s.maxTokens);
  ui.seed.value = s.seed === null ? '' : String(s.seed);
}

/** URL parameters override saved settings (not persisted unless the user edits a field). */
function applyParamOverrides(s: DemoSettings): DemoSettings {
  const n = (k: string): number | undefined => (params.has(k) && Number.isFinite(Number(params.get(k))) ? Number(params.get(k)) : undefined);
  return { ...s, temperature: n('temperature') ?? s.temperature, maxTokens: n('max_tokens') ?? s.maxTokens, seed: n('seed') ?? s.seed };
}

function setBusy(busy: boolean): void {
  const ready = engine !== null;
  ui.send.disabled = busy || !ready;
  ui.prompt.disabled = !ready;
  ui.stop.disabled = !busy;
  ui.regenerate.disabled = busy || !ready || !conversation.some((m) => m.role === 'user');
  document.body.dataset.busy = String(busy);
}

async function unloadEngine(): Promise<void> {
  generation?.abort();
  const old = engine;
  engine = null;
  document.body.dataset.engine = '';
  ui.badge.textContent = 'no model';
  ui.badge.classList.remove('active');
  setBusy(false);
  if (old) await old.unload().catch(() => undefined);
}

async function openModel(model: string | File): Promise<void> {
  clearError();
  await unloadEngine();
  ui.badge.textContent = 'loading…';
  document.body.dataset.engine = 'loading';
  // Progress messages cross the worker boundary on their own and may arrive after the engine is returned: once it
  // is, they must not overwrite the backend label.
  let loaded = false;
  try {
    engine = await createWorkerEngine({
      model,
      backend,
      onProgress: (p) => {
        if (loaded) return;
        const pct = p.totalBytes ? ` ${Math.floor((100 * p.loadedBytes) / p.totalBytes)} %` : '';
        ui.badge.textContent = p.phase === 'ready' ? 'ready' : `${p.phase}${pct}`;
      },
    });
  } catch (e) {
    loaded = true;
    document.body.dataset.engine = 'failed';
    ui.badge.textContent = 'no model';
    showError(e);
    return;
  }
  loaded = true;
  const { info } = engine;
  ui.badge.textContent = backendLabel(info.backend);
  ui.badge.title = `${info.backend.description} — ${info.backend.reason}`;
  ui.badge.classList.add('active');
  ui.mode.textContent = `${info.model.name || info.model.arch} · ${info.contextLength}-token context${rawMode ? ' · text completion mode' : ''}`;
  const stats = await engine.stats();
  ui.stats.textContent = `Loaded in ${(stats.loadMs / 1000).toFixed(1)} s (warm-up ${Math.round(stats.warmupMs)} ms).`;
  await saveLastModel(typeof model === 'string' ? model : null);
  document.body.dataset.engine = 'ready';
  document.body.dataset.backend = info.backend.name;
  setBusy(false);
  ui.prompt.focus();
}

/** Streams the assistant's answer to the conversation so far. */
async function respond(): Promise<void> {
  const current = engine;
  if (!current || generation) return;
  clearError();
  const settings = readSettings();
  const controller = new AbortController();
  generation = controller;
  const history = conversation.slice();
  const answer: StoredMessage = { role: 'assistant', content: '' };
  conversation.push(answer);
  const li = view.append(answer, conversation.length - 1);
  li.dataset.done = 'false';
  li.setAttribute('aria-busy', 'true');
  setBusy(true);
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
  let end: AnswerEnd = 'stop';
  let usage: { completion_tokens: number; prompt_tokens: number; cached: number } | null = null;
  let frame = 0;
  try {
    const stream = rawMode
      ? await current.completions.create({ prompt: history.map((m) => m.content).join(''), stream: true, ...sampling })
      : await current.chat.completions.create({
          messages: [...(settings.systemPrompt.trim() ? [{ role: 'system' as const, content: settings.systemPrompt }] : []), ...history],
          stream: true,
          ...sampling,
        });
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      const piece = choice === undefined ? '' : 'delta' in choice ? (choice.delta.content ?? '') : choice.text;
      if (piece && firstAt === 0) firstAt = performance.now();
      answer.content += piece;
      if (choice?.finish_reason) end = choice.finish_reason === 'tool_calls' ? 'stop' : choice.finish_reason;
      if (chunk.usage) {
        usage = { completion_tokens: chunk.usage.completion_tokens, prompt_tokens: chunk.usage.prompt_tokens, cached: chunk.usage.prompt_tokens_details.cached_tokens };
      }
      if (!frame) frame = requestAnimationFrame(() => ((frame = 0), view.update(li, answer.content)));
    }
  } catch (e) {
    end = controller.signal.aborted ? 'aborted' : 'error';
    showError(e);
  } finally {
    if (frame) cancelAnimationFrame(frame);
    view.update(li, answer.content);
    view.finish(li, end);
    generation = null;
    setBusy(false);
    await saveConversation(conversation);
  }
  const done = performance.now();
  const parts: string[] = [];
  if (firstAt) parts.push(`first token ${Math.round(firstAt - started)} ms`);
  if (usage && firstAt && usage.completion_tokens > 1) {
    parts.push(`${((usage.completion_tokens - 1) / ((done - firstAt) / 1000)).toFixed(1)} tok/s`);
  }
  if (usage) parts.push(`${usage.completion_tokens} tokens`, `prompt ${usage.prompt_tokens} tokens, ${usage.cached} reused from cache`);
  if (!usage && engine === current) {
    const s = await current.stats().catch(() => null);
    if (s) parts.push(`${s.decodeTokensPerSecond.toFixed(1)} tok/s overall`, `${s.promptCache.reusedTokens} prompt tokens reused so far`);
  }
  ui.stats.textContent = parts.join(' · ');
  if (ui.prompt.disabled === false) ui.prompt.focus();
}

function send(): void {
  const text = ui.prompt.value.trim();
  if (!text || !engine || generation) return;
  conversation.push({ role: 'user', content: text });
  view.append(conversation[conversation.length - 1], conversation.length - 1);
  ui.prompt.value = '';
  void respond();
}

function editAndResend(index: number): void {
  if (generation) generation.abort();
  ui.prompt.value = conversation[index].content;
  conversation = conversation.slice(0, index);
  view.render(conversation);
  void saveConversation(conversation);
  setBusy(false);
  ui.prompt.focus();
  ui.prompt.setSelectionRange(ui.prompt.value.length, ui.prompt.value.length);
}

function toggleSidebar(show = ui.sidebar.hidden): void {
  ui.sidebar.hidden = !show;
  ui.toggleSidebar.setAttribute('aria-expanded', String(show));
  if (show) ui.sidebar.querySelector<HTMLElement>('select, input, button')?.focus();
}

/**
 * Registers the service worker (offline app shell). On a host that cannot send COOP/COEP the page is not
 * cross-origin isolated (no WASM threads); the service worker adds those headers, so once it controls the page,
 * reload once. Resolves true when a reload is under way.
 */
async function startServiceWorker(): Promise<boolean> {
  if (!('serviceWorker' in navigator) || location.protocol === 'file:' || import.meta.env.DEV) return false;
  try {
    await navigator.serviceWorker.register('./sw.js');
  } catch (e) {
    console.warn('webgguf demo: service worker not registered', e);
    return false;
  }
  const key = 'webgguf-demo-isolation-reload';
  if (crossOriginIsolated || navigator.serviceWorker.controller || sessionStorage.getItem(key)) return false;
  await navigator.serviceWorker.ready;
  if (!navigator.serviceWorker.controller) {
    await new Promise<void>((resolve) => {
      navigator.serviceWorker.addEventListener('controllerchange', () => resolve(), { once: true });
      setTimeout(resolve, 3000);
    });
  }
  if (!navigator.serviceWorker.controller) return false;
  sessionStorage.setItem(key, '1');
  location.reload();
  return true;
}

async function init(): Promise<void> {
  if (await startServiceWorker()) return;
  const panel = new ModelPanel(
    {
      catalogue: $('catalogue'),
      catalogueNote: $('catalogue-note'),
      customUrl: $('custom-url'),
      load: $('load-model'),
      localFile: $('local-file'),
      download: $('download'),
      progress: $('download-progress'),
      downloadText: $('download-text'),
      pause: $('pause-download'),
      cached: $('cached-models'),
      usage: $('storage-usage'),
    },
    {
      beforeLoad: async () => {
        clearError();
        await unloadEngine();
      },
      open: async (model) => {
        await openModel(model);
        await panel.refresh();
      },
      error: showError,
    },
  );
  writeSettings(applyParamOverrides(await loadSettings()));
  conversation = await loadConversation();
  view.render(conversation);

  const phone = matchMedia('(max-width: 720px)');
  ui.composer.addEventListener('submit', (ev) => {
    ev.preventDefault();
    send();
  });
  ui.prompt.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      send();
    }
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && generation) {
      ev.preventDefault();
      generation.abort();
    } else if (ev.key === 'Escape' && !ui.sidebar.hidden && phone.matches) {
      toggleSidebar(false);
      ui.toggleSidebar.focus();
    }
  });
  ui.stop.addEventListener('click', () => generation?.abort());
  ui.regenerate.addEventListener('click', () => {
    if (generation) return;
    while (conversation.length && conversation[conversation.length - 1].role === 'assistant') conversation.pop();
    view.render(conversation);
    void respond();
  });
  ui.clear.addEventListener('click', () => {
    generation?.abort();
    conversation = [];
    view.render(conversation);
    ui.stats.textContent = '';
    void saveConversation(conversation);
    setBusy(false);
  });
  ui.toggleSidebar.addEventListener('click', () => toggleSidebar());
  if (phone.matches) toggleSidebar(false);
  phone.addEventListener('change', () => {
    ui.sidebar.hidden = phone.matches;
    ui.toggleSidebar.setAttribute('aria-expanded', String(!phone.matches));
  });
  for (const el of [ui.systemPrompt, ui.temperature, ui.topP, ui.topK, ui.maxTokens, ui.seed]) {
    el.addEventListener('change', () => void saveSettings(readSettings()));
  }
  setBusy(false);
  await panel.refresh();

  const start = params.get('model') ?? (await loadLastModel());
  if (start) {
    const url = new URL(start, location.href).href;
    const entry = (await listModels().catch(() => [])).find((m) => m.url === url);
    if (entry && !entry.complete && !params.has('model')) panel.showPaused(entry);
    else await panel.load(url);
  }
}

void init().catch(showError);
