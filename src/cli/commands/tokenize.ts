/** `webgguf tokenize` — placeholder until its issue lands. */
import { LlmError } from '../../errors.js';
import type { CliCommand } from '../cli-io.js';

const command: CliCommand = {
  name: 'tokenize',
  usage: 'webgguf tokenize (not yet available)',
  async run() {
    throw new LlmError('invalid-request', "'webgguf tokenize' is not available in this build");
  },
};
export default command;
