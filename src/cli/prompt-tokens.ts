/**
 * The prompt of the model-running sub-commands (`eval`, `generate`): token ids given directly with `--tokens 1,2,3`,
 * or `--prompt` text through the model's own tokenizer (BOS as its vocab says), and tokens shown as `id "text"`.
 */

import { LlmError } from '../errors.js';
import type { GgufFile } from '../gguf/types.js';
import { loadTokenizer } from '../tokenizer/index.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';

/** The tokenizer of a model file, or null when the file carries no vocabulary (then only --tokens works). */
async function createTokenizerFor(gguf: GgufFile): Promise<Tokenizer | null> {
  return 'tokenizer.ggml.model' in gguf.metadata ? await loadTokenizer(gguf.metadata) : null;
}

/** Token ids from `--tokens 1,2,3` or from `--prompt` through the model's tokenizer (BOS as the vocab says). */
export async function inputTokens(
  command: string,
  gguf: GgufFile,
  values: { prompt?: string; tokens?: string },
): Promise<{ tokens: number[]; tokenizer: Tokenizer | null }> {
  const tokenizer = await createTokenizerFor(gguf);
  if (values.tokens !== undefined) {
    const tokens = values.tokens.split(',').map((s) => Number(s.trim()));
    if (tokens.length === 0 || tokens.some((t) => !Number.isInteger(t) || t < 0)) {
      throw new LlmError(
        'invalid-request',
        `${command}: --tokens must be comma-separated token ids, got '${values.tokens}'`,
      );
    }
    return { tokens, tokenizer };
  }
  if (values.prompt === undefined)
    throw new LlmError('invalid-request', `${command}: give --prompt "text" or --tokens 1,2,3`);
  if (!tokenizer)
    throw new LlmError(
      'tokenizer',
      `${command}: the model file has no vocabulary (tokenizer.ggml.model); pass --tokens instead of --prompt`,
    );
  const tokens = tokenizer.encode(values.prompt, { addSpecial: true });
  if (tokens.length === 0)
    throw new LlmError('invalid-request', `${command}: the prompt tokenizes to nothing; give a non-empty --prompt`);
  return { tokens, tokenizer };
}

/** Shows a token as `id "text"` for humans (the bare id when there is no tokenizer). */
export function showToken(tokenizer: Tokenizer | null, id: number): string {
  return tokenizer ? `${id} ${JSON.stringify(tokenizer.tokenText(id))}` : String(id);
}
