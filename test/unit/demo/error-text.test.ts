/**
 * The demo's plain-language errors: each cause gets its own sentence (not found, offline, web page, no weights, not a
 * GGUF, unsupported architecture, memory), the library's message stays available as details, aborts are silent.
 */
import { describe, expect, it } from 'vitest';
import { LlmError } from '../../../src/errors';
import { DemoError, explainError } from '../../../demo/ui/error-text';

const net = (status: number | null, message = 'GET x failed') =>
  new LlmError('network', message, { details: { url: 'x', status } });

describe('explainError', () => {
  it('is silent for aborts', () => {
    expect(explainError(new LlmError('aborted', 'stopped'))).toBeNull();
  });

  it('names each network cause plainly, without advice that cannot help', () => {
    const notFound = explainError(net(404))!;
    expect(notFound.kind).toBe('not-found');
    expect(notFound.summary).toBe('The model file was not found at that address.');
    expect(`${notFound.summary} ${notFound.advice}`).not.toMatch(/Load again|resume/i);
    expect(notFound.details).toContain('GET x failed');
    expect(explainError(net(null, 'unreachable (CORS …)'), { online: false })!.kind).toBe('offline');
    expect(
      explainError(net(null, 'the server is unreachable, or it blocks cross-origin requests (CORS'), { online: true })!
        .kind,
    ).toBe('unreachable');
    expect(explainError(net(403))!.kind).toBe('forbidden');
  });

  it('tells a web page, a non-GGUF, a weightless GGUF and a truncated one apart', () => {
    const magic = (hex: string) =>
      new LlmError(
        'gguf-invalid',
        `GGUF magic at byte offset 0: not a GGUF file: first bytes are ${hex}, expected 47 47 55 46`,
        { details: { field: 'magic', offset: 0 } },
      );
    expect(explainError(magic('3c 21 64 6f'))!.kind).toBe('web-page');
    expect(explainError(magic('54 68 65 73'))!.kind).toBe('not-gguf');
    expect(
      explainError(new LlmError('gguf-invalid', "loading model: tensor 'token_embd.weight' is missing or not 2-D"))!
        .kind,
    ).toBe('no-weights');
    expect(
      explainError(
        new LlmError('gguf-invalid', 'loading model: the file holds no tensors', { details: { reason: 'no-weights' } }),
      )!.kind,
    ).toBe('no-weights');
    expect(
      explainError(
        new LlmError('gguf-invalid', 'GGUF tensor #26 offset: data lies outside the file; the file is truncated'),
      )!.kind,
    ).toBe('truncated');
  });

  it('covers architecture, memory, and the demo’s own errors', () => {
    expect(
      explainError(new LlmError('unsupported-arch', 'arch mamba', { details: { arch: 'mamba' } }))!.summary,
    ).toContain('mamba');
    expect(explainError(new LlmError('out-of-memory', 'too big'))!.kind).toBe('memory');
    const own = explainError(new DemoError('not-a-url', '“x y” is not a web address.', 'Paste a link.'))!;
    expect(own).toMatchObject({ kind: 'not-a-url', summary: '“x y” is not a web address.' });
  });
});
