/**
 * The "Model" part of the sidebar: catalogue picker, custom URL, local file, the download (progress, speed, ETA,
 * pause/resume — resumable after a reload since chunks persist in IndexedDB), and the list of cached models with
 * their sizes, which one is loaded, storage usage and delete (with confirmation). A model whose cached entry is
 * complete is never downloaded again; a file that turns out not to be a usable GGUF is never kept.
 */
import { deleteModel, downloadModel, isLlmError, listModels, storageUsage, type ModelManifest } from '../../src/index';
import { CATALOGUE, formatBytes } from './catalogue';
import { savePendingDownload } from './conversation-store';
import { DemoError } from './error-text';
import { modelUrlFrom } from './model-url';
import { isProjectorUrl, projectorFor, rememberProjector } from './projector';
import { SpeedMeter } from './status-text';

/** The elements the panel drives. */
export interface ModelPanelElements {
  readonly catalogue: HTMLSelectElement;
  readonly catalogueNote: HTMLElement;
  readonly customUrl: HTMLInputElement;
  readonly load: HTMLButtonElement;
  readonly localFile: HTMLInputElement;
  readonly download: HTMLElement;
  readonly progress: HTMLProgressElement;
  readonly downloadText: HTMLElement;
  readonly pause: HTMLButtonElement;
  readonly cached: HTMLUListElement;
  readonly usage: HTMLElement;
}

/** What the panel asks of the page. */
export interface ModelPanelHooks {
  /**
   * Loads a model (an absolute URL complete in the store, or a local File) while the current one stays usable;
   * with its vision projector `mmproj` (a URL complete in the store) when it has one; rejects with the load error
   * (the current model is then still loaded).
   */
  open(model: string | File, mmproj?: string): Promise<void>;
  /** Unloads the current model (before deleting its file). */
  unload(): Promise<void>;
  /** Shows an error. */
  error(e: unknown): void;
  /** A load is starting (true) or over (false). */
  busy?(busy: boolean): void;
}

const MODEL_ERRORS_THAT_CONDEMN_THE_FILE = new Set(['gguf-invalid']);
const HTML_TYPE = /^\s*text\/html/i;
const GGUF_MAGIC = [0x47, 0x47, 0x55, 0x46];

/**
 * Looks at the first bytes of `url` before downloading it: a web page (HTML) or a file that does not start with
 * "GGUF" is refused without storing anything. Statuses and network failures are left to `downloadModel`, whose
 * errors say more.
 */
async function probeModelUrl(url: string, signal: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { Range: 'bytes=0-7' }, signal, cache: 'no-store' });
  } catch {
    return;
  }
  if (!res.ok) {
    void res.body?.cancel();
    return;
  }
  const reader = res.body?.getReader();
  const head = new Uint8Array(8);
  let got = 0;
  while (reader && got < 4) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done || !value) break;
    head.set(value.subarray(0, 8 - got), got);
    got += Math.min(value.length, 8 - got);
  }
  void reader?.cancel().catch(() => undefined);
  const isHtml = HTML_TYPE.test(res.headers.get('Content-Type') ?? '') || head[0] === 0x3c;
  const hex = Array.from(head.subarray(0, Math.min(got, 4)), (b) => b.toString(16).padStart(2, '0')).join(' ');
  if (isHtml) {
    throw new DemoError(
      'web-page',
      'This address is a web page, not a model file.',
      'On Hugging Face, use the download link of the .gguf file (…/resolve/main/…), not its page (…/blob/main/…).',
      `GET ${url}: Content-Type ${res.headers.get('Content-Type') ?? 'none'}, first bytes ${hex || 'none'}; nothing was stored`,
    );
  }
  if (got >= 4 && !GGUF_MAGIC.every((b, i) => head[i] === b)) {
    throw new DemoError(
      'not-gguf',
      'This is not a GGUF model file.',
      'Check the address: it must lead to a .gguf file.',
      `GET ${url}: first bytes are ${hex}, expected 47 47 55 46 ("GGUF"); nothing was stored`,
    );
  }
}

/** Model picker, downloader and cache manager. */
export class ModelPanel {
  private downloading: AbortController | null = null;
  private pendingUrl: string | null = null;
  private activeUrl: string | null = null;
  private readonly meter = new SpeedMeter();

  constructor(
    private readonly el: ModelPanelElements,
    private readonly hooks: ModelPanelHooks,
  ) {
    const custom = document.createElement('option');
    custom.value = '';
    custom.textContent = 'Other model (URL or file below)';
    custom.hidden = true;
    el.catalogue.append(custom);
    for (const m of CATALOGUE) {
      const opt = document.createElement('option');
      opt.value = m.url;
      opt.textContent = `${m.label} — ${formatBytes(m.bytes)}${m.mmproj ? ` + ${formatBytes(m.mmproj.bytes)}` : ''}`;
      el.catalogue.append(opt);
    }
    el.catalogue.value = CATALOGUE[0].url;
    el.catalogue.addEventListener('change', () => {
      el.customUrl.value = ''; // the picked model is the one to load
      this.updateNote();
    });
    this.updateNote();
    el.load.addEventListener(
      'click',
      () => void this.load(el.customUrl.value.trim() || el.catalogue.value, el.customUrl.value.trim() !== ''),
    );
    el.customUrl.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        el.load.click();
      }
    });
    el.pause.addEventListener('click', () => {
      if (this.downloading) this.downloading.abort();
      else if (this.pendingUrl) void this.load(this.pendingUrl);
    });
    el.localFile.addEventListener('change', () => {
      const file = el.localFile.files?.[0];
      el.localFile.value = '';
      if (file) void this.openFile(file);
    });
  }

  /** True while a download runs. */
  get busy(): boolean {
    return this.downloading !== null;
  }

  /** Marks the loaded model (its URL, or null for none / a local file) in the picker and the cached list. */
  setActive(url: string | null): void {
    this.activeUrl = url;
    const inCatalogue = url !== null && CATALOGUE.some((m) => m.url === url);
    if (inCatalogue) this.el.catalogue.value = url;
    else if (url !== null) this.el.catalogue.value = '';
    this.updateNote();
    void this.refresh();
  }

  /**
   * Makes `input` (a URL, as typed or from the catalogue) complete in the store — skipping the network entirely when
   * `listModels()` already holds a complete entry — then opens it. A model with a vision projector (`mmproj`, else the
   * catalogue's or the one it was last loaded with) has the projector downloaded the same way, right after it. A
   * paused or failed download resumes with the same call. Resolves true when the model loaded.
   */
  async load(input: string, typed = false, mmproj?: string): Promise<boolean> {
    if (!input || this.downloading) return false;
    let url: string;
    let projector: string | null;
    try {
      url = modelUrlFrom(input, location.href);
      projector = mmproj !== undefined ? modelUrlFrom(mmproj, location.href) : await projectorFor(url);
    } catch (e) {
      this.hooks.error(e);
      return false;
    }
    if (typed && this.el.customUrl.value.trim() !== url) this.el.customUrl.value = url;
    if (projector !== null) await rememberProjector(url, projector);
    for (const file of projector !== null ? [url, projector] : [url]) {
      if (!(await this.store(file, url))) return false;
    }
    if (this.pendingUrl === null || this.pendingUrl === url) {
      this.hideDownload('done');
      this.pendingUrl = null;
    }
    return this.openStored(url, projector ?? undefined);
  }

  /**
   * Downloads `url` into the store (progress, pause/resume) unless a complete copy is there; `model` is what the
   * pause button resumes. Resolves true when `url` is complete in the store.
   */
  private async store(url: string, model: string): Promise<boolean> {
    const cached = (await listModels().catch(() => [] as ModelManifest[])).find((m) => m.url === url && m.complete);
    if (cached) return true;
    if (!navigator.onLine) {
      if (this.pendingUrl === null) this.hideDownload('idle');
      this.hooks.error(
        new DemoError(
          'offline',
          'You are offline.',
          'Connect to the internet to download a model; cached models still work offline.',
          `not downloading ${url}: navigator.onLine is false`,
        ),
      );
      return false;
    }
    const controller = new AbortController();
    this.downloading = controller;
    this.hooks.busy?.(true);
    this.pendingUrl = model;
    this.el.load.disabled = true;
    this.el.pause.textContent = 'Pause';
    this.el.pause.hidden = false;
    this.el.download.hidden = false;
    this.el.download.dataset.state = 'connecting';
    this.el.progress.value = 0;
    this.el.downloadText.textContent = url === model ? 'Connecting…' : 'Connecting (vision projector)…';
    const what = url === model ? '' : 'Vision projector: ';
    this.meter.reset();
    let ok = false;
    try {
      await probeModelUrl(url, controller.signal);
      await savePendingDownload(model); // so a reload offers to resume this download
      await downloadModel(url, {
        signal: controller.signal,
        onProgress: (p) => {
          this.el.download.dataset.state = 'downloading';
          this.el.progress.value = p.totalBytes > 0 ? p.loadedBytes / p.totalBytes : 0;
          this.el.downloadText.textContent =
            what +
            (p.phase === 'verify'
              ? 'Verifying…'
              : p.phase === 'restart'
                ? 'The file changed on the server; starting over…'
                : this.meter.update(p.loadedBytes, p.totalBytes));
        },
      });
      ok = true;
    } catch (e) {
      if (isLlmError(e, 'aborted')) {
        this.el.download.dataset.state = 'paused';
        this.el.downloadText.textContent = `${what}${Math.floor(100 * this.el.progress.value)} % downloaded — paused`;
        this.el.pause.textContent = 'Resume';
      } else {
        // A retry can only help a transient network failure, not a 404, a web page or a full disk.
        const status = isLlmError(e, 'network') ? e.details?.status : undefined;
        const transient =
          isLlmError(e, 'network') &&
          (status === null || status === undefined || (typeof status === 'number' && status >= 500));
        if (transient) {
          this.el.download.dataset.state = 'failed';
          this.el.downloadText.textContent = `${what}Download interrupted at ${Math.floor(100 * this.el.progress.value)} %`;
          this.el.pause.textContent = 'Retry';
        } else {
          this.hideDownload('failed');
          this.pendingUrl = null;
          await savePendingDownload(null);
        }
        this.hooks.error(e);
      }
    } finally {
      this.downloading = null;
      this.el.load.disabled = false;
      this.hooks.busy?.(false);
      await this.refresh();
    }
    if (!ok) return false;
    this.pendingUrl = null;
    await savePendingDownload(null);
    return true;
  }

  /**
   * Opens a stored model (with its stored projector); a file the library rejects as not a valid GGUF is deleted from
   * the store at once — unless a projector was loaded with it, which may be the file at fault.
   */
  private async openStored(url: string, mmproj?: string): Promise<boolean> {
    try {
      this.hooks.busy?.(true);
      await this.hooks.open(url, mmproj);
      return true;
    } catch (e) {
      if (isLlmError(e) && MODEL_ERRORS_THAT_CONDEMN_THE_FILE.has(e.code) && mmproj === undefined)
        await deleteModel(url).catch(() => undefined);
      this.hooks.error(e);
      return false;
    } finally {
      this.hooks.busy?.(false);
      await this.refresh();
    }
  }

  private hideDownload(state: string): void {
    this.el.download.hidden = true;
    this.el.download.dataset.state = state;
    this.el.downloadText.textContent = '';
  }

  /** Shows a partial download (of `model`, or of its projector) as paused, ready to resume (after a reload). */
  showPaused(m: ModelManifest, model: string = m.url): void {
    const stored = m.chunkPresent.filter(Boolean).length;
    const fraction = m.chunkPresent.length ? stored / m.chunkPresent.length : 0;
    this.pendingUrl = model; // a projector resumes through its model
    this.el.customUrl.value = model;
    this.el.download.hidden = false;
    this.el.download.dataset.state = 'paused';
    this.el.progress.value = fraction;
    const what = m.url === model ? '' : 'Vision projector: ';
    this.el.downloadText.textContent = `${what}${Math.floor(100 * fraction)} % of ${formatBytes(m.size)} downloaded — paused`;
    this.el.pause.textContent = 'Resume';
    this.el.pause.hidden = false;
  }

  /** Opens a local file: read slice by slice where it lies, never copied whole into memory or storage. */
  async openFile(file: File): Promise<boolean> {
    if (!/\.gguf$/i.test(file.name)) {
      this.hooks.error(new DemoError('not-gguf', `${file.name} is not a .gguf file.`, 'Choose a GGUF model file.'));
      return false;
    }
    if (!this.downloading && this.pendingUrl === null) this.hideDownload('idle');
    try {
      this.hooks.busy?.(true);
      await this.hooks.open(file);
      return true;
    } catch (e) {
      this.hooks.error(e);
      return false;
    } finally {
      this.hooks.busy?.(false);
      await this.refresh();
    }
  }

  /** Redraws the cached-models list and the storage usage line. */
  async refresh(): Promise<void> {
    try {
      const [models, usage] = await Promise.all([listModels(), storageUsage()]);
      const projectors = await Promise.all(models.map((m) => isProjectorUrl(m.url)));
      const items = models.map((m, i) => this.cachedItem(m, projectors[i]));
      if (items.length === 0) {
        const li = document.createElement('li');
        li.textContent = 'None yet.';
        items.push(li);
      }
      this.el.cached.replaceChildren(...items);
      const quota = usage.quotaBytes !== null ? ` · this site may use up to ${formatBytes(usage.quotaBytes)}` : '';
      this.el.usage.textContent = `${usage.modelCount} model file${usage.modelCount === 1 ? '' : 's'}, ${formatBytes(usage.storedBytes)} stored${quota}`;
    } catch (e) {
      this.el.usage.textContent = 'Storage information is unavailable in this browser.';
      console.warn(e);
    }
  }

  /** One cached file; a vision projector is loaded with its model, never on its own (no Load button). */
  private cachedItem(m: ModelManifest, projector: boolean): HTMLLIElement {
    const li = document.createElement('li');
    const active = m.url === this.activeUrl;
    if (active) li.setAttribute('aria-current', 'true');
    li.dataset.url = m.url;
    const name = document.createElement('span');
    const stored = m.chunkPresent.filter(Boolean).length;
    const status = m.complete ? '' : ` · partial ${Math.floor((100 * stored) / Math.max(1, m.chunkPresent.length))} %`;
    const file = decodeURIComponent(m.url.split('/').pop() ?? m.url);
    name.textContent = `${file} — ${formatBytes(m.size)}${projector ? ' · vision projector' : ''}${status}`;
    name.title = m.url;
    if (active) {
      const tag = document.createElement('strong');
      tag.className = 'active-tag';
      tag.textContent = ' · loaded';
      name.append(tag);
    }
    const buttons = document.createElement('div');
    buttons.className = 'buttons';
    const use = document.createElement('button');
    use.type = 'button';
    use.textContent = m.complete ? 'Load' : 'Resume';
    use.setAttribute('aria-label', `${use.textContent} ${file}`);
    use.hidden = active || projector; // a projector resumes and loads with its model
    use.addEventListener('click', () => void this.load(m.url));
    const del = document.createElement('button');
    del.type = 'button';
    del.textContent = 'Delete';
    del.setAttribute('aria-label', `Delete ${file}`);
    del.addEventListener('click', () => this.confirmDelete(buttons, m, file, active));
    buttons.append(use, del);
    li.append(name, buttons);
    return li;
  }

  /** Replaces the buttons by "Delete <size>? [Delete] [Cancel]"; the loaded model is unloaded first. */
  private confirmDelete(buttons: HTMLElement, m: ModelManifest, file: string, active: boolean): void {
    const box = document.createElement('div');
    box.className = 'confirm';
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', `Confirm deleting ${file}`);
    const q = document.createElement('span');
    q.textContent = active ? `Unload and delete (${formatBytes(m.size)})?` : `Delete ${formatBytes(m.size)}?`;
    const yes = document.createElement('button');
    yes.type = 'button';
    yes.className = 'danger';
    yes.textContent = active ? 'Unload and delete' : 'Delete';
    const no = document.createElement('button');
    no.type = 'button';
    no.textContent = 'Cancel';
    no.addEventListener('click', () => {
      box.replaceWith(buttons);
      (buttons.lastElementChild as HTMLElement | null)?.focus();
    });
    yes.addEventListener('click', async () => {
      yes.disabled = true;
      if (this.pendingUrl === m.url && this.downloading) this.downloading.abort();
      if (m.url === this.activeUrl) await this.hooks.unload();
      await deleteModel(m.url).catch((e: unknown) => this.hooks.error(e));
      if (this.pendingUrl === m.url) {
        this.hideDownload('idle');
        this.pendingUrl = null;
        await savePendingDownload(null);
      }
      await this.refresh();
    });
    box.append(q, yes, no);
    buttons.replaceWith(box);
    no.focus();
  }

  private updateNote(): void {
    const m = CATALOGUE.find((c) => c.url === this.el.catalogue.value);
    this.el.catalogueNote.textContent = m ? `${m.note} Needs about ${formatBytes(m.memoryBytes)} of memory.` : '';
  }
}
