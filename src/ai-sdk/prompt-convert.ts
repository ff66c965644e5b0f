/**
 * Converts the AI SDK's call options (LanguageModelV3) into a webgguf chat request: messages (text, reasoning,
 * tool calls, tool results), sampling fields, JSON response format, tools and tool choice. What the engine cannot
 * take (file parts, provider-defined tools) is reported as a warning or an error, never dropped silently.
 */

import type { LanguageModelV3CallOptions, LanguageModelV3ToolResultOutput, SharedV3Warning } from '@ai-sdk/provider';
import type { ChatCompletionRequest, ChatMessage, ChatToolCall } from '../api/types.js';
import { LlmError } from '../errors.js';
import type { ChatTool } from '../tools/tool-spec.js';

function outputText(o: LanguageModelV3ToolResultOutput): string {
  switch (o.type) {
    case 'text':
    case 'error-text':
      return o.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(o.value);
    case 'execution-denied':
      return `Tool execution denied${o.reason ? `: ${o.reason}` : ''}`;
    default:
      return JSON.stringify(o);
  }
}

/** The request (without `stream`) and the warnings for `options`. */
export function toChatRequest(options: LanguageModelV3CallOptions): {
  request: ChatCompletionRequest;
  warnings: SharedV3Warning[];
} {
  const warnings: SharedV3Warning[] = [];
  const messages: ChatMessage[] = [];
  for (const m of options.prompt) {
    if (m.role === 'system') messages.push({ role: 'system', content: m.content });
    else if (m.role === 'user') {
      const text = m.content.map((p) => {
        if (p.type !== 'text')
          throw new LlmError('invalid-request', `AI SDK prompt: ${p.type} parts are not supported (text only)`, {
            details: { field: 'prompt' },
          });
        return p.text;
      });
      messages.push({ role: 'user', content: text.join('') });
    } else if (m.role === 'assistant') {
      let content = '';
      let reasoning = '';
      const calls: ChatToolCall[] = [];
      for (const p of m.content) {
        if (p.type === 'text') content += p.text;
        else if (p.type === 'reasoning') reasoning += p.text;
        else if (p.type === 'tool-call')
          calls.push({
            id: p.toolCallId,
            type: 'function',
            function: { name: p.toolName, arguments: typeof p.input === 'string' ? p.input : JSON.stringify(p.input) },
          });
      }
      messages.push({
        role: 'assistant',
        content: calls.length > 0 && content === '' ? null : content,
        ...(reasoning ? { reasoning_content: reasoning } : {}),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
    } else {
      for (const p of m.content) {
        if (p.type === 'tool-result')
          messages.push({ role: 'tool', tool_call_id: p.toolCallId, content: outputText(p.output) });
      }
    }
  }
  const tools: ChatTool[] = [];
  for (const t of options.tools ?? []) {
    if (t.type === 'function')
      tools.push({
        type: 'function',
        function: {
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          parameters: t.inputSchema as Record<string, unknown>,
        },
      });
    else warnings.push({ type: 'unsupported', feature: `provider-defined tool ${t.name}` });
  }
  const tc = options.toolChoice;
  const toolChoice =
    tc === undefined
      ? undefined
      : tc.type === 'tool'
        ? { type: 'function' as const, function: { name: tc.toolName } }
        : tc.type;
  const rf = options.responseFormat;
  const responseFormat =
    rf?.type === 'json'
      ? rf.schema
        ? {
            type: 'json_schema' as const,
            json_schema: {
              name: (rf.name ?? 'response').replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'response',
              schema: rf.schema as Record<string, unknown>,
              strict: true,
            },
          }
        : { type: 'json_object' as const }
      : undefined;
  const request: ChatCompletionRequest = {
    messages,
    ...(options.maxOutputTokens !== undefined ? { max_tokens: options.maxOutputTokens } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.topP !== undefined ? { top_p: options.topP } : {}),
    ...(options.topK !== undefined ? { top_k: options.topK } : {}),
    ...(options.presencePenalty !== undefined ? { presence_penalty: options.presencePenalty } : {}),
    ...(options.frequencyPenalty !== undefined ? { frequency_penalty: options.frequencyPenalty } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.stopSequences && options.stopSequences.length > 0 ? { stop: options.stopSequences } : {}),
    ...(responseFormat ? { response_format: responseFormat } : {}),
    ...(tools.length > 0 && toolChoice !== 'none' ? { tools, ...(toolChoice ? { tool_choice: toolChoice } : {}) } : {}),
    ...(options.abortSignal ? { signal: options.abortSignal } : {}),
  };
  return { request, warnings };
}
