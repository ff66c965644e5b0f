/**
 * The call constraint of each syntax that has one (tool-grammar.ts → XGrammar structural tags): with a call
 * required, the bytes of a well-formed call in that syntax — unicode and nested values in its arguments — are
 * accepted token by token to the end, and arguments against the function's schema (a number for a string) are
 * refused; what the constraint lets through parses back to the same call. Byte-level fake vocabulary.
 */
import { describe, expect, it } from 'vitest';
import { GrammarEngine } from '../../../src/structured/grammar-engine.js';
import { callTag, type ToolCallFormat } from '../../../src/tools/tool-call-format.js';
import { parseToolCalls } from '../../../src/tools/tool-call-parse.js';
import { toolGrammar } from '../../../src/tools/tool-grammar.js';
import type { ToolSpec } from '../../../src/tools/tool-spec.js';
import { createFakeTokenizer } from '../engine/fake-model.js';

const edit = {
  name: 'edit',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, meta: { type: 'object', properties: { n: { type: 'integer' } } } },
    required: ['path', 'meta'],
    additionalProperties: false,
  },
};
const spec: ToolSpec = { tools: [edit], raw: [], choice: 'required', parallel: false };
const GOOD = '{"path": "ünï/😀 \\"q\\".txt", "meta": {"n": 3}}';
const BAD = '{"path": 7, "meta": {"n": 3}}';
const FORMATS: ToolCallFormat[] = ['hermes', 'llama3', 'mistral', 'mistral-args', 'harmony', 'granite', 'phi4'];

describe('tool-call constraints per syntax', () => {
  const tk = createFakeTokenizer();
  const engine = new GrammarEngine(tk, tk.vocabSize, 'fake:grammar');

  /** Whether the constraint lets `args` through in the call's tag, or the whole `text` when given. */
  async function accepts(format: ToolCallFormat, args: string, text?: string): Promise<boolean> {
    const g = toolGrammar(format, spec);
    expect(g).not.toBeNull();
    const c = await engine.constraint(await engine.compile(g!, 'tools'), tk.eogIds);
    const { tag } = callTag(format, 'edit', edit.parameters)!;
    const ok = tk.encode(text ?? `${tag.begin}${args}${tag.end}`).every((id) => c.accept(id));
    c.dispose?.();
    return ok;
  }

  for (const format of FORMATS) {
    it(`${format}: a schema-valid call passes and parses back; a wrong-typed argument is refused`, async () => {
      expect(await accepts(format, GOOD)).toBe(true);
      expect(await accepts(format, BAD)).toBe(false);
      const { tag } = callTag(format, 'edit', edit.parameters)!;
      const calls = parseToolCalls(format, `${tag.begin}${GOOD}${tag.end}`, [edit]).calls;
      expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([['edit', JSON.parse(GOOD)]]);
    });
  }

  it('qwen3-coder: the native layout (a newline between the last </parameter> and </function>) passes', async () => {
    // Each value between newlines, parameters and </function> on their own lines, as Qwen3-Coder writes them.
    const xml = '<parameter=path>\nünï/😀.txt\n</parameter>\n<parameter=meta>\n{"n": 3}\n</parameter>';
    const native = (body: string) => `<tool_call>\n<function=edit>\n${body}\n</function>\n</tool_call>`;
    expect(await accepts('qwen3-coder', '', native(xml))).toBe(true);
    expect(await accepts('qwen3-coder', '', native(xml.replace('{"n": 3}', '{"n": "x"}')))).toBe(false);
    const out = native(xml);
    const calls = parseToolCalls('qwen3-coder', out, [edit]).calls;
    expect(calls.map((c) => JSON.parse(c.arguments))).toEqual([{ path: 'ünï/😀.txt', meta: { n: 3 } }]);
  });

  it('syntaxes without a structural tag are parsed only (lfm2, gemma4, seed-oss)', () => {
    for (const f of ['lfm2', 'gemma4', 'seed-oss'] as const) expect(toolGrammar(f, spec)).toBeNull();
  });
});
