/**
 * What a request constrains its output to — `response_format` (`json_object`, `json_schema`) or a `grammar`
 * (GBNF / XGrammar EBNF text) — validated into a `GrammarSpec` with a stable cache key.
 */

import { invalidField } from '../engine/sampling-options.js';

/** A validated output constraint. */
export type GrammarSpec =
  | { readonly kind: 'json' }
  | { readonly kind: 'json-schema'; readonly schema: string; readonly strict: boolean; readonly name: string }
  | { readonly kind: 'grammar'; readonly text: string }
  | { readonly kind: 'structural-tag'; readonly tag: string };

/** `response_format` as OpenAI defines it. */
export type ResponseFormat =
  | { readonly type: 'text' }
  | { readonly type: 'json_object'; readonly schema?: Readonly<Record<string, unknown>> }
  | {
      readonly type: 'json_schema';
      readonly json_schema: {
        readonly name: string;
        readonly schema?: Readonly<Record<string, unknown>> | boolean;
        readonly strict?: boolean | null;
        readonly description?: string;
      };
    };

/** Most characters of a schema or grammar text. */
const MAX_GRAMMAR_CHARS = 256 * 1024;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validates `response_format` and `grammar` (at most one constraint); null = unconstrained. */
export function grammarSpecOf(responseFormat: unknown, grammar: unknown): GrammarSpec | null {
  let spec: GrammarSpec | null = null;
  if (responseFormat !== undefined && responseFormat !== null) {
    const allowed =
      "{ type: 'text' }, { type: 'json_object' } or { type: 'json_schema', json_schema: { name, schema, strict } }";
    if (!isObject(responseFormat)) invalidField('response_format', responseFormat, allowed);
    const t = responseFormat.type;
    if (t === 'json_object') {
      // llama.cpp's server also takes a schema here.
      const s = responseFormat.schema;
      if (s !== undefined && !isObject(s)) invalidField('response_format.schema', s, 'a JSON schema object');
      spec =
        s === undefined
          ? { kind: 'json' }
          : { kind: 'json-schema', schema: schemaText(s, 'response_format.schema'), strict: false, name: 'schema' };
    } else if (t === 'json_schema') {
      const js = responseFormat.json_schema;
      if (!isObject(js)) invalidField('response_format.json_schema', js, '{ name, schema, strict }');
      if (js.name !== undefined && (typeof js.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(js.name))) {
        invalidField('response_format.json_schema.name', js.name, 'a name of 1–64 letters, digits, _ or -');
      }
      if (js.strict !== undefined && js.strict !== null && typeof js.strict !== 'boolean')
        invalidField('response_format.json_schema.strict', js.strict, 'a boolean');
      const schema = js.schema ?? {};
      if (!isObject(schema) && typeof schema !== 'boolean')
        invalidField('response_format.json_schema.schema', schema, 'a JSON schema (object or boolean)');
      spec = {
        kind: 'json-schema',
        schema: schemaText(schema, 'response_format.json_schema.schema'),
        strict: js.strict === true,
        name: typeof js.name === 'string' ? js.name : 'schema',
      };
    } else if (t !== 'text') {
      invalidField('response_format.type', t, "'text', 'json_object' or 'json_schema'");
    }
  }
  if (grammar !== undefined && grammar !== null) {
    if (typeof grammar !== 'string' || grammar.trim() === '' || grammar.length > MAX_GRAMMAR_CHARS) {
      invalidField(
        'grammar',
        typeof grammar === 'string' ? `${grammar.slice(0, 40)}…` : grammar,
        `a non-empty GBNF/EBNF grammar text of at most ${MAX_GRAMMAR_CHARS} characters with a 'root' rule`,
      );
    }
    if (spec)
      invalidField('grammar', '(grammar)', 'given without a JSON response_format (only one constraint per request)');
    spec = { kind: 'grammar', text: grammar };
  }
  return spec;
}

function schemaText(schema: unknown, field: string): string {
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch (e) {
    invalidField(field, '(schema)', `JSON data (${String(e)})`);
  }
  if (text.length > MAX_GRAMMAR_CHARS)
    invalidField(field, '(schema)', `at most ${MAX_GRAMMAR_CHARS} characters of JSON`);
  return text;
}

/** Stable cache key of a spec. */
export function grammarKey(spec: GrammarSpec): string {
  switch (spec.kind) {
    case 'json':
      return 'json';
    case 'json-schema':
      return `schema:${spec.strict ? 1 : 0}:${spec.schema}`;
    case 'grammar':
      return `grammar:${spec.text}`;
    case 'structural-tag':
      return `tag:${spec.tag}`;
  }
}
