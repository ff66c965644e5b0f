/**
 * `webgguf template <model> --messages <file.json> [--json] [--name <template>] [--no-generation-prompt]`: renders a
 * conversation with the model's chat template and prints the prompt and its token ids (special markers parsed), or
 * one JSON object with the prompt, tokens, template hash and stop strings.
 */

import { readFile } from 'node:fs/promises';
import { buildPrompt } from '../../chat/prompt.js';
import type { ChatMessage } from '../../chat/messages.js';
import { LlmError } from '../../errors.js';
import { createTokenizer } from '../../tokenizer/index.js';
import { parseCommandLine, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { loadModelMetadata } from '../model-file.js';

const USAGE =
  'webgguf template <model> --messages <file.json> [--json] [--name <template>] [--no-generation-prompt]   render a chat prompt and its tokens';

interface TemplateArgs {
  model: string;
  messages: string;
  json: boolean;
  name?: string;
  generationPrompt: boolean;
}

function parseArgs(args: string[]): TemplateArgs {
  const { values, positionals } = parseCommandLine(
    args,
    { messages: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' }, 'no-generation-prompt': { type: 'boolean' } },
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
    ...(values.name !== undefined ? { name: values.name } : {}),
  };
}

/** Reads a messages file: a JSON array of messages, or an object with a `messages` array (OpenAI request shape). */
async function readMessages(path: string): Promise<ChatMessage[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new LlmError('invalid-request', `reading messages from ${path} failed: ${(e as Error).message}; give a JSON array of {role, content}`, {
      cause: e,
    });
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(list)) throw new LlmError('invalid-request', `${path} holds no messages array; give [{"role": "user", "content": "…"}]`);
  return list as ChatMessage[];
}

const command: CliCommand = {
  name: 'template',
  usage: USAGE,
  async run(args: string[], io: CliIo): Promise<number> {
    const opts = parseArgs(args);
    const [metadata, messages] = await Promise.all([loadModelMetadata(opts.model, io.signal), readMessages(opts.messages)]);
    const tokenizer = createTokenizer(metadata);
    const p = buildPrompt(messages, {
      metadata,
      tokenizer,
      addGenerationPrompt: opts.generationPrompt,
      ...(opts.name !== undefined ? { templateName: opts.name } : {}),
    });
    if (opts.json) {
      const doc = {
        prompt: p.prompt,
        tokens: p.tokens,
        templateHash: p.templateHash,
        templateSource: p.templateSource,
        stopStrings: p.stopStrings,
        eogTokenIds: p.eogTokenIds ?? [],
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
