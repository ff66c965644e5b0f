/** `webgguf eval` — placeholder until its issue lands. */
import { LlmError } from '../../errors.js';
import type { CliCommand } from '../cli-io.js';

const command: CliCommand = {
  name: 'eval',
  usage: 'webgguf eval (not yet available)',
  async run() {
    throw new LlmError('invalid-request', "'webgguf eval' is not available in this build");
  },
};
export default command;
