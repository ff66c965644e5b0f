/**
 * Test-page entry for test/e2e/split-cache.spec.ts: loads a split model from its first part's URL through the
 * IndexedDB model store, and runs a chat whose system prompt the persisted prompt cache (IndexedDB) stores, so a
 * reloaded page can show the restored prefix. Results are plain data for `page.evaluate`.
 */

import { createEngine } from '../../../src/api/create-engine.js';
import { listModels } from '../../../src/io/index.js';
import { listPromptCaches } from '../../../src/io/prompt-cache-store.js';

const TEMPLATE = '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:';

const api = {
  /** Loads `url` (CPU backend), runs one greedy chat; returns the text, the cached prompt tokens and what is stored. */
  async run(
    url: string,
    system: string,
    user: string,
  ): Promise<{ text: string; cached: number; parts: number; caches: number }> {
    const engine = await createEngine({
      model: url,
      backend: 'cpu',
      contextLength: 256,
      warmup: false,
      chatTemplate: TEMPLATE,
    });
    try {
      const r = await engine.chat.completions.create({
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        temperature: 0,
        max_tokens: 20,
      });
      return {
        text: r.choices[0].message.content ?? '',
        cached: r.usage?.prompt_tokens_details?.cached_tokens ?? 0,
        parts: (await listModels()).filter((m) => m.split !== undefined && m.complete).length,
        caches: (await listPromptCaches()).length,
      };
    } finally {
      await engine.unload();
    }
  },
};

declare global {
  interface Window {
    webggufSplitCache: typeof api;
  }
}
window.webggufSplitCache = api;
document.getElementById('status')!.textContent = 'ready';
