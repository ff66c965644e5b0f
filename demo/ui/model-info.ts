/**
 * The "Loaded model" facts: name, file, architecture, quantization (from the file name), vocabulary, context,
 * chat template (the model's own, or none — then chat falls back to ChatML) and backend.
 */
import type { EngineInfo } from '../../src/index';

/**
 * ChatML exactly as the library uses it when a model has no template (src/chat/template.ts; a unit test keeps the
 * two equal): its hash in `EngineInfo.chatTemplateHash` means the model has no template of its own.
 */
export const CHATML_FALLBACK_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

let chatMlHash: Promise<string | null> | null = null;

async function sha256Hex(text: string): Promise<string | null> {
  if (!globalThis.crypto?.subtle) return null;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** True when the engine chats through the ChatML fallback (the model has no chat template). */
export async function usesChatMlFallback(templateHash: string): Promise<boolean> {
  chatMlHash ??= sha256Hex(CHATML_FALLBACK_TEMPLATE).catch(() => null);
  return (await chatMlHash) === templateHash;
}

/** The quantization named in a GGUF file name ("…-Q4_K_M.gguf" → "Q4_K_M"), or null. */
export function quantFromFileName(name: string): string | null {
  const m = /(?:^|[-_.])((?:I?Q\d(?:_[A-Z0-9]+)*)|F16|F32|BF16)(?=\.gguf$|[-_.])/i.exec(name);
  return m ? m[1].toUpperCase() : null;
}

/** "494 M", "1.24 B", "292 K" parameters. */
function formatParameters(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (n >= 1e6) return `${Math.round(n / 1e6)} M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} K`;
  return String(n);
}

/** `<dt>/<dd>` pairs describing the loaded model. */
export function describeModel(info: EngineInfo, fileName: string, backend: string, noTemplate: boolean): HTMLElement[] {
  const rows: [string, string][] = [
    ['Model', info.model.name || '(unnamed)'],
    ['File', fileName],
    ['Architecture', info.model.arch],
    ['Parameters', formatParameters(info.model.parameterCount)],
    ['Quantization', quantFromFileName(fileName) ?? info.model.quantization],
    ['Vocabulary', `${info.model.vocabSize.toLocaleString('en')} tokens`],
    [
      'Context',
      `${info.contextLength.toLocaleString('en')} tokens (trained for ${info.model.trainContextLength.toLocaleString('en')})`,
    ],
    ['Chat template', noTemplate ? 'none in the file (ChatML fallback)' : 'the model’s own'],
    ['Backend', `${backend} — ${info.backend.reason}`],
  ];
  return rows.flatMap(([k, v]) => {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    return [dt, dd];
  });
}
