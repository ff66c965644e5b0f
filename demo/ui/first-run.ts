/**
 * The first-run card in the chat area, shown while no model is loaded: what the app is, the recommended model with
 * its download size and memory need (one click to download and load), "Open a local .gguf", what this browser will
 * run on (WebGPU f16 / f32, or WASM with or without threads) and why, and that everything stays on the device.
 */
import { CATALOGUE, formatBytes, type CatalogueModel } from './catalogue';

/** What this browser offers the engine, found without loading a model. */
interface BrowserCapability {
  /** Short label: 'WebGPU f16', 'WebGPU f32', 'WASM + 8 threads', 'WASM (1 thread)'. */
  readonly label: string;
  /** Why, in a sentence. */
  readonly reason: string;
}

/** Probes WebGPU (adapter, shader-f16) and WASM threads (cross-origin isolation). */
async function probeBrowser(): Promise<BrowserCapability> {
  const threads = crossOriginIsolated ? Math.min(8, navigator.hardwareConcurrency || 1) : 1;
  const wasm = threads > 1 ? `WASM + ${threads} threads` : 'WASM (1 thread)';
  const wasmWhy =
    threads > 1
      ? 'runs on the CPU cores'
      : 'runs on one CPU core (this page is not cross-origin isolated, so no threads)';
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) return { label: wasm, reason: `This browser has no WebGPU, so the model ${wasmWhy}.` };
  try {
    const adapter = await gpu.requestAdapter();
    if (!adapter) return { label: wasm, reason: `WebGPU found no usable GPU here, so the model ${wasmWhy}.` };
    const f16 = adapter.features.has('shader-f16');
    return {
      label: `WebGPU ${f16 ? 'f16' : 'f32'}`,
      reason: f16
        ? 'Your GPU supports half-precision shaders: the fastest path.'
        : 'Your GPU lacks half-precision shaders (shader-f16), so it computes in f32: a little slower, same answers.',
    };
  } catch {
    return { label: wasm, reason: `WebGPU failed to start, so the model ${wasmWhy}.` };
  }
}

/** The recommended first model: the smallest in the catalogue. */
const RECOMMENDED: CatalogueModel = CATALOGUE[0];

/** What the card's buttons do. */
export interface FirstRunActions {
  download(url: string): void;
  openFile(): void;
}

/** Fills `card` (a section in the chat area). */
export function renderFirstRun(card: HTMLElement, actions: FirstRunActions): void {
  const m = RECOMMENDED;
  card.innerHTML = `
    <h2 id="first-run-title">Chat with a language model, entirely in your browser</h2>
    <p>The model runs on your device: nothing you type leaves it, and after the first visit the app works offline.</p>
    <div class="first-run-actions">
      <button type="button" class="primary" data-action="download"></button>
      <button type="button" data-action="open">Open a local .gguf</button>
    </div>
    <p class="hint" data-role="recommended"></p>
    <p class="hint" data-role="capability">Checking what this browser can use…</p>`;
  const download = card.querySelector<HTMLButtonElement>('[data-action="download"]')!;
  download.textContent = `Download ${m.label} (${formatBytes(m.bytes)})`;
  download.addEventListener('click', () => actions.download(m.url));
  card.querySelector<HTMLButtonElement>('[data-action="open"]')!.addEventListener('click', () => actions.openFile());
  card.querySelector('[data-role="recommended"]')!.textContent =
    `Recommended to start: ${m.note} Download ${formatBytes(m.bytes)}, needs about ${formatBytes(m.memoryBytes)} of memory. More models are in the sidebar (☰ on phones).`;
  void probeBrowser().then((c) => {
    const el = card.querySelector('[data-role="capability"]');
    if (el) el.textContent = `This browser will use ${c.label}. ${c.reason}`;
    card.dataset.capability = c.label;
  });
}
