/**
 * Errors in words a person understands: one plain sentence naming the cause (not found, offline, a web page rather
 * than a model, a model without weights, not a GGUF, unsupported architecture, not enough memory …), what to do
 * next, and the library's technical message kept apart for a "Details" disclosure. Pure: no DOM, unit-tested.
 */
import { isLlmError } from '../../src/index';

/** What the error box shows. */
export interface ErrorText {
  /** One plain sentence: what went wrong. */
  readonly summary: string;
  /** What to do about it (may be empty). */
  readonly advice: string;
  /** The technical message (library wording, codes, URLs), shown behind "Details". */
  readonly details: string;
  /** A short machine-readable cause, for tests and styling. */
  readonly kind: string;
}

/** Facts about the situation that the error alone does not carry. */
export interface ErrorContext {
  /** `navigator.onLine` when the error happened. */
  readonly online?: boolean;
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

function technical(e: unknown): string {
  if (isLlmError(e)) return `${e.code}: ${e.message}`;
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

function text(kind: string, summary: string, advice: string, e: unknown): ErrorText {
  return { kind, summary, advice, details: technical(e) };
}

/** The plain-language text of `e`; null for aborts (a person pressed Stop or Pause: not an error). */
export function explainError(e: unknown, context: ErrorContext = {}): ErrorText | null {
  if (isLlmError(e, 'aborted')) return null;
  if (e instanceof DemoError) return { kind: e.kind, summary: e.summary, advice: e.advice, details: e.message };
  if (e instanceof DOMException && e.name === 'QuotaExceededError') {
    return text(
      'storage',
      'There is not enough storage space for this model.',
      'Delete cached models in the sidebar or free disk space.',
      e,
    );
  }
  if (!isLlmError(e)) {
    return text('unexpected', 'Something went wrong.', 'Reload the page and try again.', e);
  }
  const message = e.message;
  const details = e.details ?? {};
  switch (e.code) {
    case 'network': {
      const status = num(details.status);
      if (status === 404 || status === 410) {
        return text(
          'not-found',
          'The model file was not found at that address.',
          'Check the URL (copy the link of the .gguf file itself).',
          e,
        );
      }
      if (status === 401 || status === 403) {
        return text(
          'forbidden',
          'The server refused access to this file.',
          'The model may be private or gated, or the link expired. Use a public link.',
          e,
        );
      }
      if (context.online === false) {
        return text(
          'offline',
          'You are offline.',
          'Connect to the internet to download a model; cached models still work offline.',
          e,
        );
      }
      if (status === null && /unreachable|CORS|Failed to fetch/i.test(message)) {
        return text(
          'unreachable',
          'The server could not be reached.',
          'Check the address and your connection. If they are fine, the server does not allow downloads from other sites (CORS): download the file and open it as a local .gguf.',
          e,
        );
      }
      if (/changed on disk|pick it again/.test(message)) {
        return text(
          'file-changed',
          'The local file could not be read; it may have changed or moved.',
          'Open the file again.',
          e,
        );
      }
      return text('download-failed', 'The download failed.', 'Try again: a download resumes where it stopped.', e);
    }
    case 'range-unsupported':
      return text(
        'no-range',
        'This server cannot send the file in parts, which the download needs.',
        'Download the file and open it as a local .gguf.',
        e,
      );
    case 'storage-quota':
      return text(
        'storage',
        'There is not enough storage space for this model.',
        'Delete cached models in the sidebar or free disk space.',
        e,
      );
    case 'gguf-invalid': {
      if (details.field === 'magic' && /first bytes are 3c\b/.test(message)) {
        return text(
          'web-page',
          'This address is a web page, not a model file.',
          'On Hugging Face, use the download link of the .gguf file (…/resolve/main/…), not its page (…/blob/main/…).',
          e,
        );
      }
      if (details.field === 'magic') {
        return text(
          'not-gguf',
          'This is not a GGUF model file.',
          'Choose a file ending in .gguf, downloaded completely.',
          e,
        );
      }
      if (details.reason === 'no-weights' || /tensor '[^']*' is missing|token_embd\.weight' is missing/.test(message)) {
        return text(
          'no-weights',
          'This GGUF holds no model weights (it is a vocabulary-only or metadata-only file).',
          'Choose the full model file (usually hundreds of megabytes or more).',
          e,
        );
      }
      if (/truncated|remain in the file|beyond the end|past the end/i.test(message)) {
        return text('truncated', 'This GGUF file is incomplete (truncated).', 'Download it again, completely.', e);
      }
      return text(
        'damaged',
        'This GGUF file is damaged or incomplete.',
        'Download it again, or choose another file.',
        e,
      );
    }
    case 'unsupported-arch':
      return text(
        'unsupported-arch',
        `This model's architecture is not supported yet${details.arch ? ` (${String(details.arch)})` : ''}.`,
        'Pick a model from the list.',
        e,
      );
    case 'unsupported-type':
      return text(
        'unsupported-type',
        'This model uses a quantization type that is not supported yet.',
        'Try a Q4_K_M, Q4_0 or Q8_0 file of the same model.',
        e,
      );
    case 'out-of-memory':
      return text(
        'memory',
        'There is not enough memory on this device for this model.',
        'Choose a smaller model (see “Needs about …” in the list).',
        e,
      );
    case 'device-lost':
      return text(
        'gpu-lost',
        'The GPU stopped working for this page (often: it ran out of memory).',
        'Load the model again, pick a smaller one, or use the WASM (CPU) backend in Settings.',
        e,
      );
    case 'webgpu-unavailable':
      return text(
        'no-webgpu',
        'This browser cannot use the GPU here.',
        'Choose “WASM (CPU)” as the backend in Settings.',
        e,
      );
    case 'feature-missing':
      return text(
        'feature-missing',
        'This browser lacks a feature this model needs.',
        'Try the latest Chrome or Edge, or the WASM (CPU) backend in Settings.',
        e,
      );
    case 'template':
      return text(
        'template',
        'The model’s chat template could not be used.',
        'Switch to completion mode (toggle above the message box).',
        e,
      );
    case 'context-overflow':
      return text(
        'context',
        'The conversation is longer than the model can read at once.',
        'Start a new chat or edit an earlier message.',
        e,
      );
    case 'tokenizer':
      return text(
        'tokenizer',
        'The model’s vocabulary could not be read.',
        'The file may be damaged; choose another model.',
        e,
      );
    default:
      return text(e.code, 'Something went wrong.', '', e);
  }
}

/** An error the demo itself raises (bad input in the URL box, a wrong file picked), already in plain words. */
export class DemoError extends Error {
  constructor(
    readonly kind: string,
    readonly summary: string,
    readonly advice: string,
    details = `${summary} ${advice}`,
  ) {
    super(details);
    this.name = 'DemoError';
  }
}
