/** What the model URL box accepts: http(s) URLs and site paths; Hugging Face page links become download links. */
import { describe, expect, it } from 'vitest';
import { huggingFaceDownloadUrl, modelUrlFrom } from '../../../demo/ui/model-url';

const base = 'https://demo.example/chat/';

describe('modelUrlFrom', () => {
  it('refuses text that is not an address, before any request', () => {
    for (const text of ['hello world', 'hello', '', 'javascript:alert(1)', 'ftp://x/y.gguf', 'what is a gguf?']) {
      expect(() => modelUrlFrom(text, base), text).toThrow(/not a web address/);
    }
  });

  it('accepts absolute URLs, site paths and bare host names', () => {
    expect(modelUrlFrom('https://x.org/m.gguf', base)).toBe('https://x.org/m.gguf');
    expect(modelUrlFrom('/models/m.gguf', base)).toBe('https://demo.example/models/m.gguf');
    expect(modelUrlFrom('./m.gguf', base)).toBe('https://demo.example/chat/m.gguf');
    expect(modelUrlFrom('m.gguf', base)).toBe('https://demo.example/chat/m.gguf');
    expect(modelUrlFrom('huggingface.co/a/b/resolve/main/m.gguf', base)).toBe(
      'https://huggingface.co/a/b/resolve/main/m.gguf',
    );
  });

  it('rewrites Hugging Face /blob/ page links to /resolve/ download links, and nothing else', () => {
    expect(
      modelUrlFrom('https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/blob/main/q4.gguf?download=true', base),
    ).toBe('https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/q4.gguf?download=true');
    expect(huggingFaceDownloadUrl(new URL('https://example.com/a/b/blob/main/x.gguf')).href).toBe(
      'https://example.com/a/b/blob/main/x.gguf',
    );
    expect(huggingFaceDownloadUrl(new URL('https://huggingface.co/a/b/resolve/main/x.gguf')).href).toBe(
      'https://huggingface.co/a/b/resolve/main/x.gguf',
    );
  });
});
