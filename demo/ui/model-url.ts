/**
 * What the user typed in the model URL box, made into the URL of a model file: an absolute http(s) URL or a path on
 * this site ("/models/x.gguf", "./x.gguf", "x.gguf"); a Hugging Face page link (`/blob/`) becomes its download link
 * (`/resolve/`). Anything else ("hello world") is refused with a plain message before any request is made.
 */
import { DemoError } from './error-text';

/** Rewrites a Hugging Face file page (`huggingface.co/<repo>/blob/<rev>/<file>`) to its download link (`/resolve/`). */
export function huggingFaceDownloadUrl(url: URL): URL {
  if (!/(^|\.)huggingface\.co$|(^|\.)hf\.co$/.test(url.hostname)) return url;
  const m = /^(\/(?:(?:datasets|spaces)\/)?[^/]+\/[^/]+)\/blob\/(.+)$/.exec(url.pathname);
  if (!m) return url;
  const out = new URL(url.href);
  out.pathname = `${m[1]}/resolve/${m[2]}`;
  return out;
}

/**
 * The absolute URL of the model `input` names, resolved against `base` (the page); throws `DemoError('not-a-url')`
 * for text that is not an address.
 */
export function modelUrlFrom(input: string, base: string): string {
  const text = input.trim();
  const refuse = (): never => {
    throw new DemoError(
      'not-a-url',
      `“${text.length > 60 ? `${text.slice(0, 60)}…` : text}” is not a web address.`,
      'Paste the address of a .gguf file (https://…/model.gguf), or open a local file.',
    );
  };
  if (!text || /\s/.test(text)) return refuse();
  let url: URL;
  if (/^[a-z][a-z0-9+.-]*:/i.test(text)) {
    try {
      url = new URL(text);
    } catch {
      return refuse();
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return refuse();
  } else if (/^[\w-]+(\.[\w-]+)*\.[a-z]{2,}(:\d+)?\//i.test(text) && !/^[^/]*\.gguf\//i.test(text)) {
    url = new URL(`https://${text}`); // "huggingface.co/…" without a scheme
  } else if (/^(\.{0,2}\/)/.test(text) || /^[\w.%-]+(\/[\w.%-]+)*\.gguf(\?\S*)?$/i.test(text)) {
    url = new URL(text, base);
  } else {
    return refuse();
  }
  return huggingFaceDownloadUrl(url).href;
}
