/** `webgguf chat`: the session loop over injected stdin lines (streaming, history kept, /reset, EOF) and arguments. */
import { describe, expect, it } from 'vitest';
import { createChatMlFormatter } from '../../src/api/chat-formatter.js';
import { createEngineFromParts } from '../../src/api/local-engine.js';
import chat, { chatSession } from '../../src/cli/commands/chat.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import { parseSamplingFlags } from '../../src/cli/sampling-flags.js';
import { isLlmError } from '../../src/errors.js';
import { createFakeTokenizer, createFakeTransformer, spellScript } from '../unit/engine/fake-model.js';

function io(): CliIo & { stdout: string; stderr: string } {
  const o = {
    stdout: '',
    stderr: '',
    signal: new AbortController().signal,
    out: (t: string) => void (o.stdout += t),
    err: (t: string) => void (o.stderr += t),
  };
  return o;
}

async function* lines(...ls: string[]): AsyncGenerator<string> {
  for (const l of ls) yield l;
}

describe('webgguf chat', () => {
  it('answers each line, keeps the conversation (prompt cache reuse), and ends at EOF', async () => {
    const tokenizer = createFakeTokenizer();
    const engine = await createEngineFromParts({
      transformer: createFakeTransformer({ script: spellScript('Yes.') }),
      tokenizer,
      chat: createChatMlFormatter(tokenizer),
      modelIdentity: 'fake',
      backend: { name: 'fake', description: 'fake', reason: 'test' },
      contextLength: 256,
      slots: 2,
    });
    const out = io();
    const { options } = parseSamplingFlags(['--temperature', '0']);
    const rc = await chatSession(engine, lines('hello', '', 'again', '/reset', 'fresh'), out, options, 'Be brief.');
    expect(rc).toBe(0);
    expect(out.stdout).toBe('Yes.\nYes.\nYes.\n');
    expect(out.stderr).toMatch(/conversation reset/);
    const reused = [...out.stderr.matchAll(/prompt cache reused (\d+) tokens/g)].map((m) => Number(m[1]));
    expect(reused[1]).toBeGreaterThan(reused[0]);
  });

  it('parses sampling flags and refuses bad arguments with invalid-request', async () => {
    const { options, rest } = parseSamplingFlags([
      'm.gguf',
      '--temp',
      '0.5',
      '--top-k=20',
      '--stop',
      'END',
      '--stop',
      '\\n\\n',
      '--logit-bias',
      '13=-100',
      '-n',
      '7',
      '--ctx',
      '64',
    ]);
    expect(options).toEqual({
      temperature: 0.5,
      top_k: 20,
      stop: ['END', '\n\n'],
      logit_bias: { '13': -100 },
      max_tokens: 7,
    });
    expect(rest).toEqual(['m.gguf', '--ctx', '64']);
    expect(() => parseSamplingFlags(['--top-p', 'x'])).toThrow(/--top-p/);
    expect(() => parseSamplingFlags(['--logit-bias', 'a=b'])).toThrow(/TOKEN_ID=BIAS/);
    await expect(chat.run([], io())).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
    await expect(chat.run(['m.gguf', '--backend', 'tpu'], io())).rejects.toSatisfy((e) =>
      isLlmError(e, 'invalid-request'),
    );
  });
});
