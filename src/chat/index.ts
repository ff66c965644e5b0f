/**
 * Chat layer: message validation, template rendering (`renderChat`) and prompt assembly (`buildPrompt`,
 * `trimHistory`). Takes plain data (messages, GGUF metadata, a `Tokenizer`), never a file.
 */

export { CHAT_ROLES, validateMessages, type ChatContentPart, type ChatMessage, type ChatRole, type ChatToolCall } from './messages.js';
export { CHATML_TEMPLATE, renderChat, selectTemplate, type RenderChatOptions, type RenderedChat, type TemplateSource } from './template.js';
export { buildPrompt, splitTurns, trimHistory, type BuildPromptOptions, type BuiltPrompt } from './prompt.js';
export { sha256Hex } from '../io/sha256.js';
export { strftime } from './strftime.js';
export { templateSupportsThinking } from './template.js';
export { compileTemplate, type CompiledTemplate } from './template-compile.js';
export { templateCaps, type TemplateCaps } from './template-caps.js';
export { DEFAULT_TEMPLATE_BUDGET, type TemplateBudget } from './template-budget.js';
