/**
 * The "Model" part of the sidebar: catalogue picker, custom URL, local file, the download (progress, speed, ETA,
 * pause/resume — resumable after a reload since chunks persist in IndexedDB), and the list of cached models with
 * their sizes, storage usage and delete. A model whose cached entry is complete is never downloaded again.
 */
import { deleteModel, downloadModel, isLlmError, listModels, storageUsage, type ModelManifest } from '../../src/index';
import { CATALOGUE, formatBytes } from './catalogue';
import { saveLastModel } from './conversation-store';
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
  /** A model is ready to load: an absolute URL complete in the store, or a local File. */
  open(model: string | File): Promise<void>;
  /** Called before a download starts or a file is opened (the page unloads its engine, clears errors). */
  beforeLoad(): Promise<void>;
  /** Shows an error. */
  error(e: unknown): void;
}

/** An absolute URL for what the user typed (relative URLs resolve against the page). */
export function absoluteModelUrl(input: string): string {
  return new URL(input, location.href).href;
}

/** Model picker, downloader and cache manager. */
export class ModelPanel {
  private downloading: AbortController | null = null;
  private pendingUrl: string | null = null;
  private readonly meter = new SpeedMeter();

  constructor(
    private readonly el: ModelPanelElements,
    private readonly hooks: ModelPanelHooks,
  ) {
    for (const m of CATALOGUE) {
      const opt = document.createElement('option');
      opt.value = m.url;
      opt.textContent = `${m.label} — ${formatBytes(m.bytes)}`;
      el.catalogue.append(opt);
    }
    el.catalogue.addEventListener('change', () => this.updateNote());
    this.updateNote();
    el.load.addEventListener('click', () => void this.load(el.customUrl.value.trim() || el.catalogue.value));
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

  /**
   * Makes `input` (a URL) complete in the store — skipping the network entirely when `listModels()` already holds a
   * complete entry — then opens it. A paused or failed download can be resumed with the same call.
   */
  async load(input: string): Promise<void> {
    if (!input || this.downloading) return;
    let url: string;
    try {
      url = absoluteModelUrl(input);
    } catch {
      this.hooks.error(new Error(`“${input}” is not a URL. Paste the address of a .gguf file (https://…).`));
      return;
    }
    await this.hooks.beforeLoad();
    const cached = (await listModels().catch(() => [] as ModelManifest[])).find((m) => m.url === url && m.complete);
    if (cached) {
      this.el.download.hidden = true;
      await this.hooks.open(url);
      return;
    }
    const controller = new AbortController();
    this.downloading = controller;
    await saveLastModel(url); // so a reload offers to resume this download
    this.pendingUrl = url;
    this.el.load.disabled = true;
    this.el.pause.textContent = 'Pause';
    this.el.pause.disabled = false;
    this.el.download.hidden = false;
    this.el.download.dataset.state = 'downloading';
    this.el.downloadText.textContent = 'Connecting…';
    this.meter.reset();
    let ok = false;
    try {
      await downloadModel(url, {
        signal: controller.signal,
        onProgress: (p) => {
          this.el.progress.value = p.totalBytes > 0 ? p.loadedBytes / p.totalBytes : 0;
          this.el.downloadText.textContent =
            p.phase === 'verify' ? 'Verifying…' : p.phase === 'restart' ? 'The file changed on the server; starting over…' : this.meter.update(p.loadedBytes, p.totalBytes);
        },
      });
      ok = true;
    } catch (e) {
      if (isLlmError(e, 'aborted')) {
        this.el.download.dataset.state = 'paused';
        this.el.downloadText.textContent = `${this.el.downloadText.textContent ?? ''} — paused`;
      } else {
        this.el.download.dataset.state = 'failed';
        this.hooks.error(e);
      }
      this.el.pause.textContent = 'Resume';
    } finally {
      this.downloading = null;
      this.el.load.disabled = false;
      await this.refresh();
    }
    if (ok) {
      this.pendingUrl = null;
      this.el.download.hidden = true;
      this.el.download.dataset.state = 'done';
      await this.hooks.open(url);
    }
  }

  /** Shows a partial download of `url` as paused, ready to resume (after a reload). */
  showPaused(m: ModelManifest): void {
    const stored = m.chunkPresent.filter(Boolean).length;
    const fraction = m.chunkPresent.length ? stored / m.chunkPresent.length : 0;
    this.pendingUrl = m.url;
    this.el.customUrl.value = m.url;
    this.el.download.hidden = false;
    this.el.download.dataset.state = 'paused';
    this.el.progress.value = fraction;
    this.el.downloadText.textContent = `${Math.floor(100 * fraction)} % of ${formatBytes(m.size)} downloaded — paused`;
    this.el.pause.textContent = 'Resume';
  }

  /** Opens a local file: read slice by slice where it lies, never copied whole into memory or storage. */
  async openFile(file: File): Promise<void> {
    if (!/\.gguf$/i.test(file.name)) {
      this.hooks.error(new Error(`${file.name} is not a .gguf file. Choose a GGUF model file.`));
      return;
    }
    await this.hooks.beforeLoad();
    await this.hooks.open(file);
  }

  /** Redraws the cached-models list and the storage usage line. */
  async refresh(): Promise<void> {
    try {
      const [models, usage] = await Promise.all([listModels(), storageUsage()]);
      const items = models.map((m) => this.cachedItem(m));
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

  private cachedItem(m: ModelManifest): HTMLLIElement {
    const li = document.createElement('li');
    const name = document.createElement('span');
    const stored = m.chunkPresent.filter(Boolean).length;
    const status = m.complete ? '' : ` · partial ${Math.floor((100 * stored) / Math.max(1, m.chunkPresent.length))} %`;
    name.textContent = `${decodeURIComponent(m.url.split('/').pop() ?? m.url)} — ${formatBytes(m.size)}${status}`;
    name.title = m.url;
    const use = document.createElement('button');
    use.type = 'button';
    use.textContent = m.complete ? 'Load' : 'Resume';
    use.setAttribute('aria-label', `${use.textContent} ${m.url}`);
    use.addEventListener('click', () => void this.load(m.url));
    const del = document.createElement('button');
    del.type = 'button';
    del.textContent = 'Delete';
    del.setAttribute('aria-label', `Delete ${m.url}`);
    del.addEventListener('click', async () => {
      if (this.pendingUrl === m.url && this.downloading) this.downloading.abort();
      await deleteModel(m.url).catch((e: unknown) => this.hooks.error(e));
      if (this.pendingUrl === m.url) this.el.download.hidden = true;
      await this.refresh();
    });
    const buttons = document.createElement('div');
    buttons.className = 'buttons';
    buttons.append(use, del);
    li.append(name, buttons);
    return li;
  }

  private updateNote(): void {
    const m = CATALOGUE.find((c) => c.url === this.el.catalogue.value);
    this.el.catalogueNote.textContent = m ? `${m.note} Needs about ${formatBytes(m.memoryBytes)} of memory.` : '';
  }
}
