/**
 * Engine options as they cross to a worker (`wireOptionsOf`): the model and the vision projector (`mmproj`) given
 * as URL objects become strings (a URL cannot be structured-cloned), Blobs pass as they are, local-only options stay.
 */

import { describe, expect, it } from 'vitest';
import { wireOptionsOf } from '../../../src/worker/remote-engine.js';

describe('wireOptionsOf', () => {
  it('sends the model and the mmproj as strings or Blobs', () => {
    const mmproj = new URL('https://example.org/mmproj-model-f16.gguf');
    const wire = wireOptionsOf({ model: new URL('https://example.org/model.gguf'), mmproj, onProgress: () => {} });
    expect(wire).toEqual({
      model: 'https://example.org/model.gguf',
      mmproj: 'https://example.org/mmproj-model-f16.gguf',
    });
    const blob = new Blob([new Uint8Array(4)]);
    expect(wireOptionsOf({ model: 'https://example.org/m.gguf', mmproj: blob }).mmproj).toBe(blob);
    expect('mmproj' in wireOptionsOf({ model: 'https://example.org/m.gguf' })).toBe(false);
    expect(() => structuredClone(wire)).not.toThrow();
  });
});
