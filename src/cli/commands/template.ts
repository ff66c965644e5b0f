/** `webgguf template` — placeholder until its issue lands. */
import { LlmError } from '../../errors.js';
import type { CliCommand } from '../cli-io.js';

const command: CliCommand = {
  name: 'template',
  usage: 'webgguf template (not yet available)',
  async run() {
    throw new LlmError('invalid-request', "'webgguf template' is not available in this build");
  },
};
export default command;
