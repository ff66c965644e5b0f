/**
 * The demo chat: picks or opens a GGUF model, downloads it into IndexedDB with progress and pause/resume, runs it in a
 * Web Worker engine, and streams answers rendered as sanitized Markdown. Imports the public API only (src/index.ts).
 * URL parameters: ?backend=auto|webgpu|wasm, ?model=<url> (load at start), ?raw=1 (plain completion, no template).
 */
import {
  createWorkerEngine,
  deleteModel,
  downloadModel,
  isLlmError,
  listModels,
  storageUsage,
  type Engine,
} from '../src/index';
import { CATALOGUE, formatBytes } from './ui/catalogue';
import { renderMarkdown, escapeHtml } from './ui/markdown';
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

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);
const backendParam = (params.get('backend') ?? 'auto') as 'auto' | 'webgpu' | 'wasm';
const rawMode = params.get('raw') === '1';

const ui = {
  catalogue: $<HTMLSelectElement>('catalogue'),
  catalogueNote: $<HTMLParagraphElement>('catalogue-note'),
  customUrl: $<HTMLInputElement>('custom-url'),
  loadModel: $<HTMLButtonElement>('load-model'),
  localFile: $<HTMLInputElement>('local-file'),
  download: $<HTMLDivElement>('download'),
  progress: $<HTMLProgressElement>('download-progress'),
  downloadText: $<HTMLSpanElement>('download-text'),
  pause: $<HTMLButtonElement>('pause-download'),
  cached: $<HTMLUListElement>('cached-models'),
  usage: $<HTMLParagraphElement>('storage-usage'),
  systemPrompt: $<HTMLTextAreaElement>('system-prompt'),
  temperature: $<HTMLInputElement>('temperature'),
  topP: $<HTMLInputElement>('top-p'),
  topK: $<HTMLInputElement>('top-k'),
  maxTokens: $<HTMLInputElement>('max-tokens'),
  seed: $<HTMLInputElement>('seed'),
  messages: $<HTMLOListElement>('messages'),
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
};

let engine: Engine | null = null;
let settings: DemoSettings;
let conversation: StoredMessage[] = [];
let generation: AbortController | null = null;
let download: AbortController | null = null;

/** Shows an error in words a person can act on. */
function showError(e: unknown): void {
  if (isLlmError(e, 'aborted')) return;
  let text = e instanceof Error ? e.message : String(e);
  if (isLlmError(e)) {
    const advice: Partial<Record<string, string>> = {
      'webgpu-unavailable': 'This browser has no WebGPU; the CPU (WASM) backend will be used — add ?backend=wasm to force it.',
      'out-of-memory': 'The model does not fit in this device’s memory. Choose a smaller model or a shorter context.',
      'storage-quota': 'Not enough storage for this model. Delete cached models below or free disk space.',
      network: 'The download failed. Check the URL and your connection; the download resumes where it stopped.',
      'device-lost': 'The GPU was reset. Load the model again.',
      'unsupported-arch': 'This model architecture is not supported yet.',
      'unsupported-type': 'This model uses a quantization type that is not supported yet.',
      'context-overflow': 'The conversation is longer than the model’s context. Start a new chat.',
    };
    text = `${e.message}${advice[e.code] ? ` — ${advice[e.code]}` : ''}`;
  }
  ui.error.textContent = text;
  ui.error.hidden = false;
}
const clearError = () => {
  ui.error.hidden = true;
  ui.error.textContent = '';
};

function readSettings(): DemoSettings {
  const num = (el: HTMLInputElement, fallback: number) => (el.value === '' || !Number.isFinite(el.valueAsNumber) ? fallback : el.valueAsNumber);
  return {
    systemPrompt: ui.systemPrompt.value,
    temperature: num(ui.temperature, 0.7),
    topP: num(ui.topP, 0.95),
    topK: Math.round(num(ui.topK, 40)),
    maxTokens: Math.max(1, Math.round(num(ui.maxTokens, 512))),
    seed: ui.seed.value === '' ? null : Math.round(ui.seed.valueAsNumber),
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

function renderMessages(): void {
  ui.messages.replaceChildren(
    ...conversation.map((m, i) => {
      const li = document.createElement('li');
      li.className = `message ${m.role}`;
      li.dataset.index = String(i);
      const role = document.createElement('div');
      role.className = 'role';
      role.innerHTML = `<span>${m.role === 'user' ? 'You' : 'Assistant'}</span>`;
      if (m.role === 'user') {
        const edit = document.createElement('button');
        edit.type = 'button';
        edit.textContent = 'Edit';
        edit.title = 'Edit this message and resend';
        edit.addEventListener('click', () => editAndResend(i));
        role.append(edit);
      }
      const body = document.createElement('div');
      body.className = 'content';
      body.innerHTML = m.role === 'assistant' ? renderMarkdown(m.content) : `<p>${escapeHtml(m.content).replace(/\n/g, '<br>')}</p>`;
      li.append(role, body);
      return li;
    }),
  );
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

function setBusy(busy: boolean): void {
  const ready = engine !== null;
  ui.send.disabled = busy || !ready;
  ui.prompt.disabled = !ready;
  ui.stop.disabled = !busy;
  ui.regenerate.disabled = busy || !ready || !conversation.some((m) => m.role === 'user');
}

async function refreshCached(): Promise<void> {
  try {
    const [models, usage] = await Promise.all([listModels(), storageUsage()]);
    ui.cached.replaceChildren(
      ...models.map((m) => {
        const li = document.createElement('li');
        const name = document.createElement('span');
        name.textContent = `${m.url.split('/').pop() ?? m.url} — ${formatBytes(m.size)}${m.complete ? '' : ' (partial)'}`;
        name.title = m.url;
        const del = document.createElement('button');
        del.type = 'button';
        del.textContent = 'Delete';
        del.setAttribute('aria-label', `Delete ${m.url}`);
        del.addEventListener('click', async () => {
          await deleteModel(m.url).catch(showError);
          await refreshCached();
        });
        li.append(name, del);
        return li;
      }),
    );
    if (models.length === 0) ui.cached.innerHTML = '<li><span>None yet</span></li>';
    ui.usage.textContent = `Storage used: ${formatBytes(usage.usedBytes)}${usage.quotaBytes ? ` of ${formatBytes(usage.quotaBytes)}` : ''}`;
  } catch (e) {
    ui.usage.textContent = 'Storage information unavailable.';
    console.warn(e);
  }
}

function showProgress(loaded: number, total: number, startedAt: number, startBytes: number): void {
  ui.download.hidden = false;
  ui.progress.value = total > 0 ? loaded / total : 0;
  const seconds = (performance.now() - startedAt) / 1000;
  const speed = seconds > 0.2 ? (loaded - startBytes) / seconds : 0;
  const eta = speed > 0 ? (total - loaded) / speed : Infinity;
  ui.downloadText.textContent = `${formatBytes(loaded)} / ${formatBytes(total)}${speed > 0 ? ` · ${formatBytes(speed)}/s · ${Number.isFinite(eta) ? `${Math.ceil(eta)} s left` : ''}` : ''}`;
}

/** Downloads (or resumes) a model URL into IndexedDB, then starts an engine on it. */
async function loadFromUrl(url: string): Promise<void> {
  clearError();
  await unloadEngine();
  download = new AbortController();
  ui.pause.textContent = 'Pause';
  ui.loadModel.disabled = true;
  const startedAt = performance.now();
  let startBytes = -1;
  try {
    await downloadModel(url, {
      signal: download.signal,
      onProgress: (p) => {
        if (startBytes < 0) startBytes = p.loadedBytes;
        showProgress(p.loadedBytes, p.totalBytes, startedAt, startBytes);
      },
    });
    download = null;
    ui.download.hidden = true;
    await saveLastModel(url);
    await startEngine(url);
  } catch (e) {
    if (isLlmError(e, 'aborted')) {
      ui.downloadText.textContent += ' · paused';
      ui.pause.textContent = 'Resume';
    } else {
      showError(e);
    }
  } finally {
    ui.loadModel.disabled = false;
    await refreshCached();
  }
}

async function startEngine(model: string | File): Promise<void> {
  ui.badge.textContent = 'loading…';
  ui.badge.classList.remove('active');
  const started = performance.now();
  engine = await createWorkerEngine({
    model,
    backend: backendParam,
    onProgress: (p) => {
      ui.badge.textContent = `${p.phase} ${p.totalBytes ? Math.round((100 * p.loadedBytes) / p.totalBytes) : 0}%`;
    },
  });
  const info = await engine.backendInfo();
  ui.badge.textContent = info.label;
  ui.badge.title = info.reason;
  ui.badge.classList.add('active');
  ui.stats.textContent = `Loaded in ${((performance.now() - started) / 1000).toFixed(1)} s.`;
  document.body.dataset.engine = 'ready';
  setBusy(false);
  ui.prompt.focus();
}

async function unloadEngine(): Promise<void> {
  generation?.abort();
  const old = engine;
  engine = null;
  document.body.dataset.engine = '';
  setBusy(false);
  if (old) await old.unload().catch(() => undefined);
}

/** Streams the assistant's answer to the current conversation. */
async function respond(): Promise<void> {
  if (!engine) return;
  clearError();
  settings = readSettings();
  await saveSettings(settings);
  generation = new AbortController();
  const answer: StoredMessage = { role: 'assistant', content: '' };
  const history = conversation.slice();
  conversation.push(answer);
  renderMessages();
  setBusy(true);
  const bubble = ui.messages.lastElementChild?.querySelector('.content') as HTMLElement;
  const sampling = {
    temperature: settings.temperature,
    top_p: settings.topP,
    top_k: settings.topK,
    max_tokens: settings.maxTokens,
    ...(settings.seed !== null ? { seed: settings.seed } : {}),
    signal: generation.signal,
  };
  try {
    const stream = rawMode
      ? await engine.completions.create({ prompt: history.map((m) => m.content).join('\n'), stream: true, ...sampling })
      : await engine.chat.completions.create({
          messages: [...(settings.systemPrompt ? [{ role: 'system' as const, content: settings.systemPrompt }] : []), ...history],
          stream: true,
          ...sampling,
        });
    for await (const chunk of stream) {
      const choice = chunk.choices[0] as { delta?: { content?: string | null }; text?: string } | undefined;
      answer.content += choice?.delta?.content ?? choice?.text ?? '';
      bubble.innerHTML = renderMarkdown(answer.content);
      ui.messages.scrollTop = ui.messages.scrollHeight;
    }
  } catch (e) {
    showError(e);
  } finally {
    generation = null;
    await saveConversation(conversation);
    setBusy(false);
    bubble.closest('li')?.setAttribute('data-done', 'true');
    await showStats();
  }
}

async function showStats(): Promise<void> {
  if (!engine) return;
  const s = await engine.stats();
  const parts = [
    `${s.decodeTokensPerSecond.toFixed(1)} tok/s`,
    `first token ${Math.round(s.timeToFirstTokenMs)} ms`,
    `prefill ${s.prefillTokensPerSecond.toFixed(0)} tok/s`,
    `prompt cache reused ${s.promptCache.reusedTokens} tokens`,
  ];
  ui.stats.textContent = parts.join(' · ');
}

function editAndResend(index: number): void {
  if (generation) return;
  ui.prompt.value = conversation[index].content;
  conversation = conversation.slice(0, index);
  renderMessages();
  void saveConversation(conversation);
  ui.prompt.focus();
}

async function init(): Promise<void> {
  settings = await loadSettings();
  writeSettings(settings);
  conversation = await loadConversation();
  renderMessages();
  for (const m of CATALOGUE) {
    const opt = document.createElement('option');
    opt.value = m.url;
    opt.textContent = `${m.label} — ${formatBytes(m.bytes)}`;
    ui.catalogue.append(opt);
  }
  const updateNote = () => {
    const m = CATALOGUE.find((c) => c.url === ui.catalogue.value);
    ui.catalogueNote.textContent = m ? `${m.note} Needs about ${formatBytes(m.memoryBytes)} of memory.` : '';
  };
  ui.catalogue.addEventListener('change', updateNote);
  updateNote();
  ui.loadModel.addEventListener('click', () => void loadFromUrl(ui.customUrl.value.trim() || ui.catalogue.value));
  ui.pause.addEventListener('click', () => {
    if (download) download.abort();
    else void loadFromUrl(ui.customUrl.value.trim() || ui.catalogue.value);
  });
  ui.localFile.addEventListener('change', async () => {
    const file = ui.localFile.files?.[0];
    if (!file) return;
    clearError();
    await unloadEngine();
    await saveLastModel(null);
    await startEngine(file).catch(showError);
  });
  ui.composer.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = ui.prompt.value.trim();
    if (!text || !engine || generation) return;
    conversation.push({ role: 'user', content: text });
    ui.prompt.value = '';
    void respond();
  });
  ui.prompt.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      ui.composer.requestSubmit();
    }
  });
  ui.stop.addEventListener('click', () => generation?.abort());
  ui.regenerate.addEventListener('click', () => {
    while (conversation.length && conversation[conversation.length - 1].role === 'assistant') conversation.pop();
    void respond();
  });
  ui.clear.addEventListener('click', () => {
    generation?.abort();
    conversation = [];
    renderMessages();
    void saveConversation(conversation);
  });
  ui.toggleSidebar.addEventListener('click', () => {
    ui.sidebar.hidden = !ui.sidebar.hidden;
    ui.toggleSidebar.setAttribute('aria-expanded', String(!ui.sidebar.hidden));
  });
  if (matchMedia('(max-width: 720px)').matches) {
    ui.sidebar.hidden = true;
    ui.toggleSidebar.setAttribute('aria-expanded', 'false');
  }
  for (const el of [ui.systemPrompt, ui.temperature, ui.topP, ui.topK, ui.maxTokens, ui.seed]) {
    el.addEventListener('change', () => void saveSettings(readSettings()));
  }
  if ('serviceWorker' in navigator && location.protocol !== 'file:' && !import.meta.env.DEV) {
    navigator.serviceWorker.register('./sw.js').catch((e) => console.warn('service worker not registered', e));
  }
  await refreshCached();
  const start = params.get('model') ?? (await loadLastModel());
  if (start) {
    ui.customUrl.value = start;
    await loadFromUrl(start);
  }
  setBusy(false);
}

void init().catch(showError);
