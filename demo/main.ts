/**
 * The demo chat: wires the model panel (pick / download / open a GGUF), the engine (ui/engine-host.ts), the first-run
 * card, the conversations and the chat itself (ui/chat-controller.ts). A new model is loaded next to the current one
 * and replaces it only once it works; the "last model" is remembered only after a successful load. Imports the
 * public API only.
 * URL parameters: ?model=<url> (load at start), ?mmproj=<url> (its vision projector: images in chat), ?backend=auto|webgpu|wasm, ?raw=1 (text completion mode),
 * ?temperature=, ?max_tokens=, ?seed= (override the saved settings without saving them, e.g. for greedy tests).
 */
import { listModels, type BackendChoice, type Engine } from '../src/index';
import { ChatController } from './ui/chat-controller';
import {
  DEFAULT_SETTINGS,
  loadLastModel,
  loadPendingDownload,
  loadSettings,
  saveLastModel,
  saveSettings,
  type ChatMode,
  type DemoSettings,
} from './ui/conversation-store';
import { ConversationList } from './ui/conversation-list';
import { hostingOf, startEngine } from './ui/engine-host';
import { ErrorBox } from './ui/error-box';
import { renderFirstRun } from './ui/first-run';
import { describeModel, usesChatMlFallback } from './ui/model-info';
import { ImageAttachment } from './ui/image-attach';
import { ModelPanel } from './ui/model-panel';
import { isProjectorUrl, projectorFor } from './ui/projector';
import { wireNotesPanel } from './ui/notes-panel';
import { backendLabel } from './ui/status-text';
import { startServiceWorker } from './ui/sw-client';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);
const backendParam = ['auto', 'webgpu', 'wasm', 'cpu'].includes(params.get('backend') ?? '')
  ? (params.get('backend') as BackendChoice)
  : null;

const ui = {
  systemPrompt: $<HTMLTextAreaElement>('system-prompt'),
  temperature: $<HTMLInputElement>('temperature'),
  topP: $<HTMLInputElement>('top-p'),
  topK: $<HTMLInputElement>('top-k'),
  maxTokens: $<HTMLInputElement>('max-tokens'),
  seed: $<HTMLInputElement>('seed'),
  backend: $<HTMLSelectElement>('backend'),
  badge: $<HTMLSpanElement>('backend-badge'),
  modelName: $<HTMLSpanElement>('model-name'),
  modeNote: $<HTMLElement>('mode-note'),
  sidebar: $<HTMLElement>('sidebar'),
  toggleSidebar: $<HTMLButtonElement>('toggle-sidebar'),
  firstRun: $<HTMLElement>('first-run'),
  templateNote: $<HTMLElement>('template-note'),
  modelInfoSection: $<HTMLElement>('model-info-section'),
  modelInfo: $<HTMLElement>('model-info'),
  stats: $<HTMLParagraphElement>('stats'),
  localFile: $<HTMLInputElement>('local-file'),
};
const errors = new ErrorBox($('error'));
const modeRadios = Array.from(document.querySelectorAll<HTMLInputElement>('input[name="mode"]'));

/** The loaded model: its engine and where it came from (URL, or null for a local file). */
let loaded: { engine: Engine; url: string | null; label: string } | null = null;
let loading = false;
let modeOverride: ChatMode | null = params.get('raw') === '1' ? 'completion' : null;

function readSettings(): DemoSettings {
  const num = (el: HTMLInputElement, fallback: number): number =>
    Number.isFinite(el.valueAsNumber) ? el.valueAsNumber : fallback;
  return {
    systemPrompt: ui.systemPrompt.value,
    temperature: Math.max(0, num(ui.temperature, DEFAULT_SETTINGS.temperature)),
    topP: Math.min(1, Math.max(0, num(ui.topP, DEFAULT_SETTINGS.topP))),
    topK: Math.max(0, Math.round(num(ui.topK, DEFAULT_SETTINGS.topK))),
    maxTokens: Math.max(1, Math.round(num(ui.maxTokens, DEFAULT_SETTINGS.maxTokens))),
    seed: Number.isFinite(ui.seed.valueAsNumber) ? Math.round(ui.seed.valueAsNumber) : null,
    mode: (modeRadios.find((r) => r.checked)?.value as ChatMode | undefined) ?? 'chat',
    backend: (ui.backend.value as DemoSettings['backend']) || 'auto',
  };
}

function writeSettings(s: DemoSettings): void {
  ui.systemPrompt.value = s.systemPrompt;
  ui.temperature.value = String(s.temperature);
  ui.topP.value = String(s.topP);
  ui.topK.value = String(s.topK);
  ui.maxTokens.value = String(s.maxTokens);
  ui.seed.value = s.seed === null ? '' : String(s.seed);
  ui.backend.value = s.backend;
  setMode(s.mode);
}

/** Settings to save: URL overrides (?raw=1 …) are not persisted. */
function persistSettings(): void {
  void saveSettings({ ...readSettings(), ...(modeOverride ? { mode: savedMode } : {}) });
}
let savedMode: ChatMode = 'chat';

function setMode(mode: ChatMode): void {
  for (const r of modeRadios) r.checked = r.value === mode;
  document.body.dataset.mode = mode;
  refreshHeader();
}

/** URL parameters override saved settings (not persisted unless the user edits a field). */
function applyParamOverrides(s: DemoSettings): DemoSettings {
  const n = (k: string): number | undefined =>
    params.has(k) && Number.isFinite(Number(params.get(k))) ? Number(params.get(k)) : undefined;
  savedMode = s.mode;
  return {
    ...s,
    temperature: n('temperature') ?? s.temperature,
    maxTokens: n('max_tokens') ?? s.maxTokens,
    seed: n('seed') ?? s.seed,
    mode: modeOverride ?? s.mode,
  };
}

const chat = new ChatController({
  els: {
    list: $<HTMLOListElement>('messages'),
    announcer: $('announcer'),
    prompt: $<HTMLTextAreaElement>('prompt'),
    composer: $<HTMLFormElement>('composer'),
    send: $<HTMLButtonElement>('send'),
    stop: $<HTMLButtonElement>('stop'),
    regenerate: $<HTMLButtonElement>('regenerate'),
    clear: $<HTMLButtonElement>('clear'),
    stats: ui.stats,
    meter: $('context-meter'),
    undo: $('undo'),
    undoButton: $<HTMLButtonElement>('undo-clear'),
  },
  engine: () => loaded?.engine ?? null,
  settings: readSettings,
  error: (e) => errors.show(e),
  clearError: () => errors.clear(),
  changed: () => void conversations.refresh(),
  attachment: new ImageAttachment({
    button: $<HTMLButtonElement>('attach'),
    input: $<HTMLInputElement>('attach-file'),
    pasteTarget: $('prompt'),
    preview: $('attachment'),
    thumb: $<HTMLImageElement>('attachment-thumb'),
    remove: $<HTMLButtonElement>('attachment-remove'),
    note: $('attach-note'),
  }),
});
const conversations = new ConversationList($<HTMLUListElement>('conversations'), chat);

function refreshHeader(): void {
  const completion = document.body.dataset.mode === 'completion';
  ui.modelName.textContent = loaded ? loaded.label : loading ? 'loading…' : 'no model loaded';
  ui.modelName.title = loaded
    ? `Loaded model: ${loaded.label}${loaded.url ? ` (${loaded.url})` : ''}`
    : 'No model loaded';
  ui.modeNote.textContent = loaded
    ? `${loaded.engine.info.contextLength}-token context${completion ? ' · text completion mode' : ''}`
    : '';
  ui.firstRun.hidden = loaded !== null || loading;
}

/**
 * Loads `model` in a new engine while the current one keeps working; only once the new one is ready does it replace
 * (and unload) the old one. Rejects with the load error, the current model untouched.
 */
async function openModel(model: string | File, mmproj?: string): Promise<void> {
  errors.clear();
  loading = true;
  document.body.dataset.loading = 'true';
  const previousBadge = ui.badge.textContent;
  if (!loaded) document.body.dataset.engine = 'loading';
  let done = false;
  refreshHeader();
  try {
    const backend: BackendChoice = backendParam ?? (ui.backend.value as BackendChoice);
    const engine = await startEngine({
      model,
      ...(mmproj !== undefined ? { mmproj } : {}),
      backend,
      onProgress: (p) => {
        // Progress crosses the worker boundary on its own and may arrive after the engine is returned.
        if (done) return;
        const pct = p.totalBytes ? ` ${Math.floor((100 * p.loadedBytes) / p.totalBytes)} %` : '';
        ui.badge.textContent = p.phase === 'ready' ? 'ready' : `${p.phase}${pct}`;
      },
    });
    done = true;
    const old = loaded;
    chat.stopGenerating();
    const url = typeof model === 'string' ? model : null;
    const name = typeof model === 'string' ? decodeURIComponent(model.split('/').pop() ?? model) : model.name;
    loaded = { engine, url, label: engine.info.model.name ? `${engine.info.model.name} (${name})` : name };
    document.body.dataset.hosting = hostingOf(engine); // 'attached': reused from another tab, not loaded twice
    if (old) void old.engine.unload().catch(() => undefined);
    await saveLastModel(url); // only now: a model that failed to load is never retried at startup
    await onModelReady(name);
  } catch (e) {
    done = true;
    ui.badge.textContent = previousBadge;
    if (!loaded) document.body.dataset.engine = 'failed';
    throw e;
  } finally {
    loading = false;
    delete document.body.dataset.loading;
    refreshHeader();
  }
}

async function onModelReady(fileName: string): Promise<void> {
  if (!loaded) return;
  const { info } = loaded.engine;
  ui.badge.textContent = backendLabel(info.backend);
  const hosting = hostingOf(loaded.engine);
  const shared =
    hosting === 'attached'
      ? ' — shared: already loaded in another tab'
      : hosting === 'shared'
        ? ' — shared with other tabs'
        : '';
  ui.badge.title = `${info.backend.description} — ${info.backend.reason}${shared}`;
  ui.badge.classList.add('active');
  const noTemplate = await usesChatMlFallback(info.chatTemplateHash);
  ui.templateNote.hidden = !noTemplate || document.body.dataset.mode === 'completion';
  ui.modelInfoSection.hidden = false;
  ui.modelInfo.replaceChildren(...describeModel(info, fileName, backendLabel(info.backend), noTemplate));
  const stats = await loaded.engine.stats();
  ui.stats.textContent = `Loaded in ${(stats.loadMs / 1000).toFixed(1)} s (warm-up ${Math.round(stats.warmupMs)} ms).`;
  panel.setActive(loaded.url);
  document.body.dataset.engine = 'ready';
  document.body.dataset.backend = info.backend.name;
  chat.engineChanged();
  refreshHeader();
  chat.focus();
}

async function unloadModel(): Promise<void> {
  chat.stopGenerating();
  const old = loaded;
  loaded = null;
  document.body.dataset.engine = '';
  ui.badge.textContent = 'no model';
  ui.badge.classList.remove('active');
  ui.modelInfoSection.hidden = true;
  ui.templateNote.hidden = true;
  panel.setActive(null);
  chat.engineChanged();
  refreshHeader();
  if (old) await old.engine.unload().catch(() => undefined);
}

const panel = new ModelPanel(
  {
    catalogue: $('catalogue'),
    catalogueNote: $('catalogue-note'),
    customUrl: $('custom-url'),
    load: $('load-model'),
    localFile: ui.localFile,
    download: $('download'),
    progress: $('download-progress'),
    downloadText: $('download-text'),
    pause: $('pause-download'),
    cached: $('cached-models'),
    usage: $('storage-usage'),
  },
  {
    open: openModel,
    unload: unloadModel,
    error: (e) => errors.show(e),
    busy: (busy) => {
      loading = busy;
      refreshHeader();
    },
  },
);

function toggleSidebar(show = ui.sidebar.hidden): void {
  ui.sidebar.hidden = !show;
  ui.toggleSidebar.setAttribute('aria-expanded', String(show));
  if (show) ui.sidebar.querySelector<HTMLElement>('select, input, button')?.focus();
}

function wireSettings(phone: MediaQueryList): void {
  for (const el of [ui.systemPrompt, ui.temperature, ui.topP, ui.topK, ui.maxTokens, ui.seed, ui.backend]) {
    el.addEventListener('change', persistSettings);
  }
  for (const r of modeRadios) {
    r.addEventListener('change', () => {
      modeOverride = null;
      savedMode = r.value as ChatMode;
      setMode(savedMode);
      if (savedMode === 'completion') ui.templateNote.hidden = true;
      persistSettings();
    });
  }
  $('use-completion').addEventListener('click', () => {
    modeRadios.find((r) => r.value === 'completion')?.click();
    ui.templateNote.hidden = true;
  });
  $('reset-settings').addEventListener('click', () => {
    modeOverride = null;
    savedMode = DEFAULT_SETTINGS.mode;
    writeSettings({ ...DEFAULT_SETTINGS });
    persistSettings();
  });
  $('unload').addEventListener('click', () => void unloadModel());
  const persist = $<HTMLButtonElement>('persist');
  const persistStatus = $('persist-status');
  const showPersisted = (yes: boolean): void => {
    persistStatus.textContent = yes
      ? 'Models are kept until you delete them.'
      : 'The browser may evict models when space runs low.';
    persist.hidden = yes;
  };
  void navigator.storage
    ?.persisted?.()
    .then(showPersisted)
    .catch(() => undefined);
  persist.addEventListener('click', async () => {
    const ok = await navigator.storage?.persist?.().catch(() => false);
    showPersisted(ok === true);
    if (!ok)
      persistStatus.textContent =
        'The browser declined (it decides from how often you use the site); models are still stored.';
  });
  ui.toggleSidebar.addEventListener('click', () => toggleSidebar());
  if (phone.matches) toggleSidebar(false);
  phone.addEventListener('change', () => {
    ui.sidebar.hidden = phone.matches;
    ui.toggleSidebar.setAttribute('aria-expanded', String(!phone.matches));
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && chat.generating) {
      ev.preventDefault();
      chat.stopGenerating();
    } else if (ev.key === 'Escape' && !ui.sidebar.hidden && phone.matches) {
      toggleSidebar(false);
      ui.toggleSidebar.focus();
    }
  });
}

/** At startup: the ?model= parameter, else the last model that loaded (cached, so no network), else nothing. */
async function startModel(): Promise<void> {
  const models = await listModels().catch(() => []);
  const pending = await loadPendingDownload();
  const projector = pending ? await projectorFor(pending) : null; // its download may be the one left paused
  const partial = pending ? models.find((m) => (m.url === pending || m.url === projector) && !m.complete) : undefined;
  if (partial && pending && !params.has('model')) panel.showPaused(partial, pending);
  const param = params.get('model');
  if (param && (await panel.load(param, false, params.get('mmproj') ?? undefined))) return;
  // The last model that worked, else the most recently used complete one: from the cache, never a network request.
  // A failure (the ?model= above, or a stored file that no longer loads) stays on screen while the next one loads.
  const last = await loadLastModel();
  const projectors = await Promise.all(models.map((m) => isProjectorUrl(m.url)));
  const complete = models
    .filter((m, i) => m.complete && m.url !== param && !projectors[i]) // a projector loads with its model
    .sort((a, b) => b.lastUsedAt - a.lastUsedAt);
  const order = [...complete.filter((m) => m.url === last), ...complete.filter((m) => m.url !== last)];
  const stored = new Set(models.filter((m) => m.complete).map((m) => m.url));
  for (const m of order.slice(0, 3)) {
    const projector = await projectorFor(m.url);
    if (projector !== null && !stored.has(projector)) continue; // its projector's download waits for Resume
    const failure = errors.current;
    const ok = await panel.load(m.url);
    if (failure !== null) errors.show(failure);
    if (ok) return;
  }
}

async function init(): Promise<void> {
  if (await startServiceWorker()) return;
  renderFirstRun(ui.firstRun, {
    download: (url) => void panel.load(url),
    openFile: () => ui.localFile.click(),
  });
  writeSettings(applyParamOverrides(await loadSettings()));
  const phone = matchMedia('(max-width: 720px)');
  wireSettings(phone);
  await conversations.start();
  refreshHeader();
  await panel.refresh();
  await startModel();
  refreshHeader();
}

wireNotesPanel(
  {
    load: $<HTMLButtonElement>('notes-load'),
    status: $('notes-status'),
    notes: $<HTMLTextAreaElement>('notes-text'),
    query: $<HTMLInputElement>('notes-query'),
    search: $<HTMLButtonElement>('notes-search'),
    results: $<HTMLOListElement>('notes-results'),
  },
  (e) => errors.show(e),
);

void init().catch((e: unknown) => errors.show(e));
