/**
 * `webgguf template <model> --messages <file.json> [--json] [--name <template>] [--no-generation-prompt]
 * [--kwargs <json>] [--raw]`: renders a conversation with the model's chat template exactly as the engine (and
 * llama.cpp's server) does, and prints the prompt and its token ids. The file holds the OpenAI request shape
 * `{ messages, tools?, chat_template_kwargs? }` or a bare messages array; tools, assistant `tool_calls` and
 * `role: 'tool'` messages are rendered. The printed prompt is the text that is tokenised (no leading BOS text when
 * the vocabulary adds BOS itself; `--raw` shows the template's output as is).
 */

import { readFile } from 'node:fs/promises';
import { buildPrompt } from '../../chat/prompt.js';
import type { ChatMessage } from '../../chat/messages.js';
import { validateChatTemplateKwargs } from '../../chat/template-kwargs.js';
import { LlmError } from '../../errors.js';
import { loadTokenizer } from '../../tokenizer/index.js';
import { parseCommandLine, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { loadModelMetadata } from '../model-file.js';

const USAGE =
  'webgguf template <model> --messages <file.json> [--json] [--name <template>] [--no-generation-prompt] [--kwargs <json>] [--raw]   render a chat prompt and its tokens';

interface TemplateArgs {
  model: string;
  messages: string;
  json: boolean;
  name?: string;
  generationPrompt: boolean;
  kwargs?: string;
  raw: boolean;
}

function parseArgs(args: string[]): TemplateArgs {
  const { values, positionals } = parseCommandLine(
    args,
    {
      messages: { type: 'string' },
      name: { type: 'string' },
      json: { type: 'boolean' },
      'no-generation-prompt': { type: 'boolean' },
      kwargs: { type: 'string' },
      raw: { type: 'boolean' },
    },
    USAGE,
  );
  if (positionals.length === 0) throw usageError('missing <model>', USAGE);
  if (positionals.length > 1) throw usageError(`unexpected argument '${positionals[1]}'`, USAGE);
  if (values.messages === undefined) throw usageError('missing --messages <file.json>', USAGE);
  return {
    model: positionals[0],
    messages: values.messages,
    json: values.json === true,
    generationPrompt: values['no-generation-prompt'] !== true,
    raw: values.raw === true,
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(values.kwargs !== undefined ? { kwargs: values.kwargs } : {}),
  };
}

/** What a messages file holds. */
interface TemplateInput {
  messages: ChatMessage[];
  tools?: unknown[];
  chatTemplateKwargs: Readonly<Record<string, unknown>>;
}

/** Reads a messages file: a JSON array of messages, or `{ messages, tools?, chat_template_kwargs? }`. */
async function readInput(path: string): Promise<TemplateInput> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new LlmError(
      'invalid-request',
      `reading messages from ${path} failed: ${(e as Error).message}; give a JSON array of {role, content} or {messages, tools, chat_template_kwargs}`,
      {
        cause: e,
      },
    );
  }
  if (Array.isArray(parsed)) return { messages: parsed as ChatMessage[], chatTemplateKwargs: {} };
  if (typeof parsed !== 'object' || parsed === null)
    throw new LlmError('invalid-request', `${path} holds no messages; give [{"role": "user", "content": "…"}]`);
  const doc = parsed as { messages?: unknown; tools?: unknown; chat_template_kwargs?: unknown };
  if (!Array.isArray(doc.messages))
    throw new LlmError(
      'invalid-request',
      `${path} holds no messages array; give {"messages": [{"role": "user", "content": "…"}]}`,
      { details: { field: 'messages' } },
    );
  if (doc.tools !== undefined && doc.tools !== null && !Array.isArray(doc.tools)) {
    throw new LlmError('invalid-request', `${path}: 'tools' must be an array of {type: 'function', function: {...}}`, {
      details: { field: 'tools' },
    });
  }
  return {
    messages: doc.messages as ChatMessage[],
    ...(Array.isArray(doc.tools) && doc.tools.length > 0 ? { tools: doc.tools as unknown[] } : {}),
    chatTemplateKwargs: validateChatTemplateKwargs(doc.chat_template_kwargs),
  };
}

function parseKwargs(text: string): Readonly<Record<string, unknown>> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new LlmError(
      'invalid-request',
      `--kwargs must be a JSON object, e.g. '{"enable_thinking": false}': ${(e as Error).message}`,
      { details: { field: 'kwargs' } },
    );
  }
  return validateChatTemplateKwargs(v);
}

const command: CliCommand = {
  name: 'template',
  usage: USAGE,
  async run(args: string[], io: CliIo): Promise<number> {
    const opts = parseArgs(args);
    const [metadata, input] = await Promise.all([loadModelMetadata(opts.model, io.signal), readInput(opts.messages)]);
    const tokenizer = await loadTokenizer(metadata);
    const kwargs = { ...input.chatTemplateKwargs, ...(opts.kwargs !== undefined ? parseKwargs(opts.kwargs) : {}) };
    const p = buildPrompt(input.messages, {
      metadata,
      tokenizer,
      addGenerationPrompt: opts.generationPrompt,
      chatTemplateKwargs: kwargs,
      ...(input.tools ? { tools: input.tools } : {}),
      ...(opts.name !== undefined ? { templateName: opts.name } : {}),
      ...(opts.raw ? { stripBos: false } : {}),
      ...(io.signal ? { signal: io.signal } : {}),
    });
    if (opts.json) {
      const doc = {
        prompt: p.prompt,
        tokens: p.tokens,
        templateHash: p.templateHash,
        templateSource: p.templateSource,
        stopStrings: p.stopStrings,
        eogTokenIds: p.eogTokenIds ?? [],
        caps: p.caps,
      };
      io.out(`${JSON.stringify(doc, null, 2)}\n`);
      return 0;
    }
    io.out(`${p.prompt}\n`);
    io.out(`--- ${p.tokens.length} tokens (template ${p.templateSource}, sha256 ${p.templateHash.slice(0, 16)}…)\n`);
    io.out(`${p.tokens.join(' ')}\n`);
    return 0;
  },
};
export default command;
