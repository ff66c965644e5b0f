/**
 * Constrained decoding with XGrammar on stories260K (a tiny story model that never writes JSON by itself): with
 * `response_format` json_object / json_schema or a GBNF `grammar`, every output that ends by stop parses and
 * validates against its schema (or matches its grammar), at greedy and sampled settings, whole and streamed;
 * `finish_reason: 'length'` marks a cut output; bad schemas and grammars are `invalid-request` naming XGrammar's
 * error, and the engine serves the next request normally afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { isLlmError } from '../../../src/errors.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');

type Schema = {
  type?: string;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  minItems?: number;
  maxItems?: number;
  additionalProperties?: boolean;
  maxLength?: number;
};

/** The subset of JSON Schema these tests use. */
function validates(v: unknown, s: Schema): boolean {
  if (s.enum) return s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v));
  switch (s.type) {
    case 'object': {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
      const o = v as Record<string, unknown>;
      if ((s.required ?? []).some((k) => !(k in o))) return false;
      if (s.additionalProperties === false && Object.keys(o).some((k) => !(k in (s.properties ?? {})))) return false;
      return Object.entries(s.properties ?? {}).every(([k, ps]) => !(k in o) || validates(o[k], ps));
    }
    case 'array':
      return (
        Array.isArray(v) &&
        (s.minItems === undefined || v.length >= s.minItems) &&
        (s.maxItems === undefined || v.length <= s.maxItems) &&
        v.every((x) => !s.items || validates(x, s.items))
      );
    case 'string':
      return typeof v === 'string' && (s.maxLength === undefined || v.length <= s.maxLength);
    case 'integer':
      return (
        Number.isInteger(v) &&
        (s.minimum === undefined || (v as number) >= s.minimum) &&
        (s.maximum === undefined || (v as number) <= s.maximum)
      );
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

const SCHEMAS: Schema[] = [
  {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 12 }, age: { type: 'integer', minimum: 0, maximum: 120 } },
    required: ['name', 'age'],
    additionalProperties: false,
  },
  {
    type: 'object',
    properties: { mood: { enum: ['happy', 'sad', 'angry'] }, ok: { type: 'boolean' } },
    required: ['mood', 'ok'],
    additionalProperties: false,
  },
  { type: 'array', items: { type: 'integer', minimum: -9, maximum: 99 }, minItems: 2, maxItems: 4 },
  {
    type: 'object',
    properties: {
      title: { type: 'string', maxLength: 10 },
      tags: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 3 },
      done: { type: 'boolean' },
    },
    required: ['title', 'tags', 'done'],
    additionalProperties: false,
  },
];

describe('constrained decoding on stories260K', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 256 });
  });
  afterAll(() => engine.unload());

  it('json_schema: every stop-ended output parses and validates (chat and completions, greedy and sampled)', async () => {
    let stopped = 0;
    for (const [i, schema] of SCHEMAS.entries()) {
      for (const sampling of [
        { temperature: 0 },
        { temperature: 1, seed: i + 1 },
        { temperature: 1.5, top_k: 0, seed: 99 },
      ]) {
        const response_format = { type: 'json_schema' as const, json_schema: { name: `s${i}`, schema, strict: true } };
        const chat = await engine.chat.completions.create({
          messages: [{ role: 'user', content: 'Once upon a time' }],
          response_format,
          max_tokens: 120,
          ...sampling,
        });
        const text = await engine.completions.create({
          prompt: 'Lily said',
          response_format,
          max_tokens: 120,
          ...sampling,
        });
        for (const [out, finish] of [
          [chat.choices[0].message.content, chat.choices[0].finish_reason],
          [text.choices[0].text, text.choices[0].finish_reason],
        ] as const) {
          if (finish !== 'stop') continue;
          stopped++;
          const v = JSON.parse(out) as unknown;
          expect(validates(v, schema), `${out} vs ${JSON.stringify(schema)}`).toBe(true);
        }
      }
    }
    expect(stopped).toBeGreaterThan(12);
  });

  it('json_object: the output is a JSON object; streamed text equals the whole answer', async () => {
    const req = {
      messages: [{ role: 'user' as const, content: 'Tom' }],
      response_format: { type: 'json_object' as const },
      temperature: 0,
      max_tokens: 60,
    };
    const r = await engine.chat.completions.create(req);
    if (r.choices[0].finish_reason === 'stop') expect(typeof JSON.parse(r.choices[0].message.content)).toBe('object');
    else expect(() => JSON.parse(r.choices[0].message.content)).toThrow();
    let streamed = '';
    for await (const c of await engine.chat.completions.create({ ...req, stream: true }))
      streamed += c.choices[0].delta.content ?? '';
    expect(streamed).toBe(r.choices[0].message.content);
  });

  it('n choices each get their own grammar matcher: every stop-ended choice validates', async () => {
    const schema = SCHEMAS[0];
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'Once upon a time' }],
      response_format: { type: 'json_schema', json_schema: { name: 'n', schema, strict: true } },
      max_tokens: 120,
      temperature: 1.2,
      seed: 5,
      n: 3,
    });
    expect(r.choices).toHaveLength(3);
    expect(new Set(r.choices.map((c) => c.message.content)).size).toBeGreaterThan(1);
    let stopped = 0;
    for (const c of r.choices) {
      if (c.finish_reason !== 'stop') continue;
      stopped++;
      expect(validates(JSON.parse(c.message.content) as unknown, schema), c.message.content).toBe(true);
    }
    expect(stopped).toBeGreaterThan(0);
  });

  it("max_tokens cuts the output with finish_reason 'length'", async () => {
    const r = await engine.completions.create({
      prompt: 'Once',
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: SCHEMAS[3] } },
      temperature: 0,
      max_tokens: 3,
    });
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage.completion_tokens).toBe(3);
  });

  it('a GBNF grammar constrains the output', async () => {
    const grammar =
      'root ::= "The " animal " is " color "."\nanimal ::= "cat" | "dog" | "bird"\ncolor ::= "red" | "blue"';
    for (const seed of [1, 2, 3]) {
      const r = await engine.completions.create({
        prompt: 'Once upon a time',
        grammar,
        temperature: 1,
        seed,
        max_tokens: 40,
      });
      expect(r.choices[0].finish_reason).toBe('stop');
      expect(r.choices[0].text).toMatch(/^The (cat|dog|bird) is (red|blue)\.$/);
    }
  });

  it('bad schemas and grammars are invalid-request naming the problem; the next request is served', async () => {
    const bad: [Record<string, unknown>, string, RegExp][] = [
      [{ grammar: 'root ::= "a" | ' }, 'grammar', /cannot be compiled: .*(line|column|Expect)/i],
      [{ grammar: 'start ::= "a"' }, 'grammar', /cannot be compiled/],
      [
        {
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'strange' } } } },
          },
        },
        'response_format',
        /cannot be compiled/,
      ],
      [{ response_format: { type: 'xml' } }, 'response_format.type', /json_schema/],
      [
        { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: 5 } } },
        'response_format.json_schema.schema',
        /schema/,
      ],
      [{ response_format: { type: 'json_object' }, grammar: 'root ::= "a"' }, 'grammar', /one constraint/],
      [{ grammar: 7 }, 'grammar', /grammar/],
    ];
    for (const [extra, field, message] of bad) {
      const e = await engine.completions
        .create({ prompt: 'x', max_tokens: 4, ...extra } as never)
        .catch((x: unknown) => x);
      expect(isLlmError(e, 'invalid-request'), String(e)).toBe(true);
      if (isLlmError(e)) {
        expect(e.details?.field).toBe(field);
        expect(e.message).toMatch(message);
      }
      const ok = await engine.completions.create({
        prompt: 'x',
        grammar: 'root ::= "yes" | "no"',
        temperature: 0,
        max_tokens: 5,
      });
      expect(ok.choices[0].text).toMatch(/^(yes|no)$/);
    }
  });
});
