/**
 * The demo's model catalogue (demo/ui/catalogue.ts): every entry a Hugging Face `resolve` URL of a `.gguf` with a
 * positive size and a memory figure above its downloads; a vision entry's projector an `mmproj` GGUF of the same
 * repository; the vision entries the issue asks for (SmolVLM, Gemma 3/4, Qwen-VL) present, each named in the README.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, EMBEDDING_MODEL, formatBytes } from '../../../demo/ui/catalogue.js';

const RESOLVE = /^https:\/\/huggingface\.co\/([\w.-]+\/[\w.-]+)\/resolve\/main\/([\w.-]+\.gguf)$/;

describe('demo catalogue', () => {
  it('entries: unique ids, Hugging Face resolve URLs, sizes and memory', () => {
    const all = [...CATALOGUE, EMBEDDING_MODEL];
    expect(new Set(all.map((m) => m.id)).size).toBe(all.length);
    for (const m of all) {
      const [, , file] = RESOLVE.exec(m.url) ?? [];
      expect(file, m.id).toBeDefined();
      expect(file, `${m.id}: a chat model, not a projector`).not.toMatch(/mmproj/i);
      expect(Number.isSafeInteger(m.bytes) && m.bytes > 0, m.id).toBe(true);
      expect(m.memoryBytes, m.id).toBeGreaterThan(m.bytes + (m.mmproj?.bytes ?? 0) * 0.5);
    }
  });

  it("a vision entry's projector is an mmproj GGUF of the model's repository", () => {
    const vision = CATALOGUE.filter((m) => m.mmproj);
    for (const m of vision) {
      const [, repo] = RESOLVE.exec(m.url)!;
      const [, projRepo, projFile] = RESOLVE.exec(m.mmproj!.url) ?? [];
      expect(projRepo, m.id).toBe(repo);
      expect(projFile, m.id).toMatch(/mmproj/i);
      expect(Number.isSafeInteger(m.mmproj!.bytes) && m.mmproj!.bytes > 0, m.id).toBe(true);
    }
  });

  it('offers a SmolVLM, a Gemma 3/4 and a Qwen-VL model with their projectors, each named in the README', () => {
    const readme = readFileSync('README.md', 'utf8');
    const vision = CATALOGUE.filter((m) => m.mmproj);
    for (const family of [/SmolVLM/, /Gemma [34]/, /Qwen2\.5-VL|Qwen3-VL/]) {
      const m = vision.find((v) => family.test(v.label));
      expect(m, String(family)).toBeDefined();
      expect(readme, m!.label).toContain(`"${m!.label}"`);
    }
    const qwen = vision.find((v) => /Qwen2\.5-VL/.test(v.label))!;
    expect(formatBytes(qwen.bytes)).toBe('1.8 GB'); // 1,929,901,056 bytes
    expect(formatBytes(qwen.mmproj!.bytes)).toBe('806 MB'); // 844,757,728 bytes
  });
});
