/**
 * The encoder architectures' entries are fetched on demand (src/model/arch/index.ts, LAZY_ARCHITECTURES): in a fresh
 * module graph (as a page has) `getArchitecture` refuses one with a clear error until `loadArchitecture` imported
 * it, decoders need nothing, and unknown names stay `unsupported-arch` with every supported name listed.
 */

import { describe, expect, it, vi } from 'vitest';

/** The registry in a fresh module graph: no lazily loaded entry imported yet. */
async function freshRegistry(): Promise<typeof import('../../../src/model/arch/index.js')> {
  vi.resetModules();
  return import('../../../src/model/arch/index.js');
}

function thrown(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('expected an error');
}

describe('lazily loaded architectures', () => {
  it('an encoder entry needs loadArchitecture first; decoders are there at once', async () => {
    const reg = await freshRegistry();
    expect(reg.getArchitecture('llama').name).toBe('llama');
    const before = thrown(() => reg.getArchitecture('bert'));
    expect(before).toMatchObject({ code: 'invalid-request' });
    expect(before.message).toContain("await loadArchitecture('bert')");
    await reg.loadArchitecture('bert');
    expect(reg.getArchitecture('bert')).toMatchObject({ name: 'bert', encoder: expect.anything() });
    // Other names, non-strings and decoders load nothing and do not throw.
    await reg.loadArchitecture('llama');
    await reg.loadArchitecture('no-such-arch');
    await reg.loadArchitecture(undefined);
    expect(thrown(() => reg.getArchitecture('modern-bert'))).toMatchObject({ code: 'invalid-request' });
  });

  it('every lazily loaded name resolves to its own entry', async () => {
    const reg = await freshRegistry();
    const names = reg.architectureNames();
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      await reg.loadArchitecture(name);
      expect(reg.getArchitecture(name).name).toBe(name);
    }
  });

  it('unknown architectures are unsupported-arch, listing the lazy ones too', async () => {
    const reg = await freshRegistry();
    const err = thrown(() => reg.getArchitecture('rwkv7'));
    expect(err.code).toBe('unsupported-arch');
    expect(err.message).toContain("'rwkv7'");
    expect(err.message).toContain('gemma-embedding');
    expect(err.message).toContain('llama');
  });
});
