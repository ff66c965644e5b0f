/**
 * Constrained decoding for one model: XGrammar's tokenizer info built once from our vocabulary, compiled grammars
 * cached by (model, constraint), and a per-request `TokenConstraint` (a grammar matcher) whose bitmask the sampler
 * applies to the logit row.
 *
 * The vocabulary is given to XGrammar exactly, whatever the tokenizer type: every token's decoded bytes (what our
 * stream decoder emits for it — byte-level BPE, SPM with byte fallback and WPM alike) are written in GPT-2's
 * byte-to-character alphabet and declared `BYTE_LEVEL`, so XGrammar sees the same bytes we output. Control tokens
 * (except tool-call / reasoning syntax markers, seen as their text) and tokens past the tokenizer's vocabulary are
 * empty (never allowed); the end-of-generation tokens are its stop tokens.
 */

import { LlmError } from '../errors.js';
import type { TokenConstraint } from '../engine/generate.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { TOOL_MARKERS } from '../tools/tool-markers.js';
import { grammarKey, type GrammarSpec } from './grammar-spec.js';
import { loadXgrammar, resetXgrammar, withXgrammarMessages, type XgrammarModule } from './xgrammar-loader.js';

type Compiler = Awaited<ReturnType<XgrammarModule['GrammarCompiler']['createGrammarCompiler']>>;
type Compiled = Awaited<ReturnType<Compiler['compileBuiltinJSONGrammar']>>;

/** GPT-2's byte → printable character map (the byte-level BPE alphabet). */
function byteAlphabet(): string[] {
  const out: string[] = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    out[b] = printable ? String.fromCharCode(b) : String.fromCharCode(256 + n++);
  }
  return out;
}

/**
 * Control tokens that are syntax of tool calls or reasoning (`[TOOL_CALLS]`, `<|python_tag|>`, harmony markers…):
 * the grammar engine sees them as their text so a structural tag can require them; other control tokens are never
 * allowed.
 */
const SYNTAX_MARKERS: ReadonlySet<string> = new Set([...TOOL_MARKERS, '<think>', '</think>', '[THINK]', '[/THINK]']);

/**
 * Structural tags' JSON contents allow any whitespace; rewrite each as the compact-JSON grammar of its schema (as
 * `response_format` is compiled), so a model cannot spend its budget on newlines inside a call's arguments.
 */
async function compactJsonTags(xg: XgrammarModule, node: unknown): Promise<unknown> {
  if (Array.isArray(node)) return Promise.all(node.map((n) => compactJsonTags(xg, n)));
  if (typeof node !== 'object' || node === null) return node;
  const o = node as Record<string, unknown>;
  if (o.type === 'json_schema' && 'json_schema' in o) {
    const grammar = await xg.Testings._jsonSchemaToEBNF(JSON.stringify(o.json_schema), false, -1, [', ', ': '], true);
    return { type: 'grammar', grammar };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = await compactJsonTags(xg, v);
  return out;
}

/** Most compiled grammars kept per model. */
const MAX_CACHED = 32;

/** Compiles and caches constraints for one model and builds per-request matchers. */
export class GrammarEngine {
  private readonly tokenizer: Tokenizer;
  private readonly vocabSize: number;
  private readonly modelKey: string;
  private compiler: Promise<{ xg: XgrammarModule; compiler: Compiler }> | null = null;
  private readonly cache = new Map<string, Compiled>();
  /** Compile times, ms, of the latest compiles (bench). */
  lastCompileMs = 0;

  constructor(tokenizer: Tokenizer, vocabSize: number, modelKey: string) {
    this.tokenizer = tokenizer;
    this.vocabSize = vocabSize;
    this.modelKey = modelKey;
  }

  private getCompiler(): Promise<{ xg: XgrammarModule; compiler: Compiler }> {
    this.compiler ??= (async () => {
      const xg = await loadXgrammar();
      const alphabet = byteAlphabet();
      const tk = this.tokenizer;
      const vocab: string[] = new Array<string>(this.vocabSize);
      for (let id = 0; id < this.vocabSize; id++) {
        const marker =
          id < tk.vocabSize && tk.isControl(id) && !tk.eogIds.has(id) && SYNTAX_MARKERS.has(tk.tokenText(id));
        if (id >= tk.vocabSize || (tk.isControl(id) && !marker)) {
          vocab[id] = '';
          continue;
        }
        const bytes = marker ? new TextEncoder().encode(tk.tokenText(id)) : tk.tokenBytes(id);
        let s = '';
        for (const b of bytes) s += alphabet[b];
        vocab[id] = s;
      }
      const info = await xg.TokenizerInfo.createTokenizerInfo(vocab, 'BYTE_LEVEL', false, this.vocabSize, [
        ...tk.eogIds,
      ]);
      const compiler = await xg.GrammarCompiler.createGrammarCompiler(info, true);
      return { xg, compiler };
    })().catch((e: unknown) => {
      this.compiler = null;
      throw e;
    });
    return this.compiler;
  }

  /** Compiles `spec` (cached by model + spec); a bad grammar or schema is `invalid-request` naming XGrammar's error. */
  async compile(spec: GrammarSpec, field: string): Promise<Compiled> {
    const key = `${this.modelKey}\n${grammarKey(spec)}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const { compiler, xg } = await this.getCompiler();
    const t0 = performance.now();
    const r = await withXgrammarMessages(async () => {
      switch (spec.kind) {
        // Whitespace is not free: a model could otherwise fill its budget with newlines inside the JSON (small models
        // do). Output is compact JSON with ", " / ": " separators; `strict` forbids properties the schema does not name.
        case 'json':
          return compiler.compileJSONSchema('{"type":"object"}', false, -1, [', ', ': '], false);
        case 'json-schema':
          return compiler.compileJSONSchema(spec.schema, false, -1, [', ', ': '], spec.strict);
        case 'grammar':
          return compiler.compileGrammar(spec.text, 'root');
        case 'structural-tag':
          return compiler.compileStructuralTag((await compactJsonTags(xg, JSON.parse(spec.tag) as unknown)) as never);
      }
    });
    if (r.error !== undefined || r.value === undefined) {
      // XGrammar aborted its instance: drop it (and everything built on it) so the next request starts clean.
      this.reset();
      const why =
        r.messages
          .map((m) => m.replace(/^\[FATAL\]\s*\S+:\d+:\s*/, ''))
          .filter((m) => m && !/^Aborted\(/.test(m))
          .join('; ') || String(r.error);
      throw new LlmError(
        'invalid-request',
        `request field '${field}': the ${spec.kind === 'grammar' ? 'grammar' : 'JSON schema'} cannot be compiled: ${why}`,
        {
          details: {
            field,
            allowed:
              spec.kind === 'grammar' ? 'a GBNF/EBNF grammar with a root rule' : 'a JSON schema XGrammar supports',
          },
        },
      );
    }
    this.lastCompileMs = performance.now() - t0;
    this.cache.set(key, r.value);
    if (this.cache.size > MAX_CACHED) {
      const [oldKey, old] = this.cache.entries().next().value as [string, Compiled];
      this.cache.delete(oldKey);
      old.dispose();
    }
    return r.value;
  }

  /** A fresh matcher over `compiled` for one request; `stopIds` end the output (the request's end tokens). */
  async constraint(compiled: Compiled, stopIds: Iterable<number>): Promise<TokenConstraint> {
    const { xg } = await this.getCompiler();
    const matcher = await xg.GrammarMatcher.createGrammarMatcher(compiled, [...stopIds]);
    let disposed = false;
    return {
      nextMask: () => matcher.getNextTokenBitmask(),
      accept: (id) => matcher.acceptToken(id),
      isTerminated: () => matcher.isTerminated(),
      dispose: () => {
        if (!disposed) matcher.dispose();
        disposed = true;
      },
    };
  }

  /** Forgets the instance, compiler and cache. */
  reset(): void {
    this.cache.clear();
    this.compiler = null;
    resetXgrammar();
  }
}
