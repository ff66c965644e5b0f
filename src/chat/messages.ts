/**
 * Chat messages (OpenAI-shaped) and their validation before a template sees them: an empty conversation, an unknown
 * role, non-string content or a `tool` message answering no call is `LlmError('invalid-request')` with the index of
 * the offending message and what to change.
 */

import { LlmError } from '../errors.js';

/** Roles a conversation may use. */
const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

/** One role. */
type ChatRole = (typeof CHAT_ROLES)[number];

/** A tool call made by the assistant (OpenAI shape). */
interface ChatToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** A typed content part (only text parts are rendered). */
interface ChatContentPart {
  readonly type: 'text';
  readonly text: string;
}

/** One message of a conversation. */
export interface ChatMessage {
  readonly role: ChatRole;
  /** The text, or typed text parts. May be null or absent only for an assistant message that makes tool calls. */
  readonly content?: string | null | readonly ChatContentPart[];
  /** An assistant's reasoning (rendered by templates that show past reasoning). */
  readonly reasoning_content?: string;
  /** Assistant tool calls. */
  readonly tool_calls?: readonly ChatToolCall[];
  /** For `tool` messages: the id of the call this answers. */
  readonly tool_call_id?: string;
  /** Optional author or tool name. */
  readonly name?: string;
}

function invalid(message: string, index?: number): LlmError {
  return new LlmError('invalid-request', `validating chat messages: ${message}`, {
    details: index === undefined ? {} : { index },
  });
}

/**
 * Checks a conversation; throws `LlmError('invalid-request')` on the first problem. Returns the messages typed.
 * A `tool` message must follow an assistant message with `tool_calls`; when it names a `tool_call_id`, one of those
 * calls must have that id.
 */
export function validateMessages(messages: unknown): readonly ChatMessage[] {
  if (!Array.isArray(messages))
    throw invalid(`'messages' must be an array of {role, content} objects, got ${typeof messages}`);
  if (messages.length === 0) throw invalid('the conversation is empty; send at least one message');
  const openCalls = new Set<string>();
  let callsOpen = false;
  messages.forEach((m: unknown, i: number) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw invalid(`message ${i} is not an object`, i);
    const msg = m as Record<string, unknown>;
    const role = msg.role;
    if (typeof role !== 'string' || !(CHAT_ROLES as readonly string[]).includes(role)) {
      throw invalid(`message ${i} has unknown role ${JSON.stringify(role)}; use one of ${CHAT_ROLES.join(', ')}`, i);
    }
    const content = msg.content;
    const calls = msg.tool_calls;
    const hasCalls = role === 'assistant' && Array.isArray(calls) && calls.length > 0;
    if (Array.isArray(content)) {
      content.forEach((p: unknown, k: number) => {
        const part = p as { type?: unknown; text?: unknown } | null;
        if (typeof part !== 'object' || part === null || part.type !== 'text' || typeof part.text !== 'string') {
          throw invalid(
            `message ${i} content[${k}] must be {type: 'text', text: string} (other part types are not supported)`,
            i,
          );
        }
      });
    } else if (typeof content !== 'string' && !(hasCalls && (content === null || content === undefined))) {
      throw invalid(
        `message ${i} (${role}) has ${content === null ? 'null' : typeof content} content; content must be a string or text parts`,
        i,
      );
    }
    if (msg.reasoning_content !== undefined && typeof msg.reasoning_content !== 'string') {
      throw invalid(`message ${i} reasoning_content must be a string`, i);
    }
    if (calls !== undefined && role !== 'assistant')
      throw invalid(`message ${i} (${role}) has tool_calls; only assistant messages may`, i);
    if (hasCalls) {
      openCalls.clear();
      callsOpen = true;
      (calls as unknown[]).forEach((c, k) => {
        const call = c as Partial<ChatToolCall> | null;
        if (typeof call !== 'object' || call === null || typeof call.function?.name !== 'string') {
          throw invalid(`message ${i} tool_calls[${k}] needs {id, type: 'function', function: {name, arguments}}`, i);
        }
        if (typeof call.id === 'string') openCalls.add(call.id);
      });
    } else if (role === 'tool') {
      const id = msg.tool_call_id;
      if (!callsOpen) throw invalid(`message ${i} is a tool result but no assistant tool call precedes it`, i);
      if (id !== undefined && (typeof id !== 'string' || (openCalls.size > 0 && !openCalls.has(id)))) {
        throw invalid(
          `message ${i} answers tool call ${JSON.stringify(id)}, which no preceding assistant message made`,
          i,
        );
      }
    } else {
      callsOpen = false;
      openCalls.clear();
    }
  });
  return messages as ChatMessage[];
}
