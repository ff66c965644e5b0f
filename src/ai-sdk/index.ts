/**
 * `webgguf/ai-sdk`: a Vercel AI SDK provider (LanguageModelV3 of `@ai-sdk/provider`) over a webgguf `Engine` or
 * `WorkerEngine`, so `generateText`, `streamText`, `generateObject` / `streamObject` and tools of the `ai` package
 * run on a model in the page (or in Node).
 * @example
 * import { streamText } from 'ai';
 * import { createWebGGUF } from 'webgguf/ai-sdk';
 * const webgguf = createWebGGUF(engine);
 * const r = streamText({ model: webgguf(), prompt: 'Tell me a story' });
 * for await (const t of r.textStream) console.log(t);
 */

import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { Engine } from '../api/engine.js';
import type { ChatCompletion, ChatCompletionChunk, CompletionUsage } from '../api/types.js';
import { toChatRequest } from './prompt-convert.js';

function finish(reason: string | null): LanguageModelV3FinishReason {
  const unified =
    reason === 'stop' ? 'stop' : reason === 'length' ? 'length' : reason === 'tool_calls' ? 'tool-calls' : 'other';
  return { unified, raw: reason ?? undefined };
}

function usage(u: CompletionUsage | null | undefined): LanguageModelV3Usage {
  return {
    inputTokens: {
      total: u?.prompt_tokens,
      noCache: u ? u.prompt_tokens - u.prompt_tokens_details.cached_tokens : undefined,
      cacheRead: u?.prompt_tokens_details.cached_tokens,
      cacheWrite: undefined,
    },
    outputTokens: { total: u?.completion_tokens, text: u?.completion_tokens, reasoning: undefined },
  };
}

/** The AI SDK language model of one engine. */
export class WebGGUFLanguageModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3';
  readonly provider = 'webgguf';
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  private readonly engine: Engine;

  constructor(engine: Engine, modelId?: string) {
    this.engine = engine;
    this.modelId = modelId ?? (engine.info.model.name || engine.info.model.identity);
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const { request, warnings } = toChatRequest(options);
    const r = (await this.engine.chat.completions.create({ ...request, stream: false })) as ChatCompletion;
    const m = r.choices[0].message;
    const content: LanguageModelV3Content[] = [];
    if (m.reasoning_content) content.push({ type: 'reasoning', text: m.reasoning_content });
    if (m.content) content.push({ type: 'text', text: m.content });
    for (const c of m.tool_calls ?? [])
      content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.function.name, input: c.function.arguments });
    return {
      content,
      finishReason: finish(r.choices[0].finish_reason),
      usage: usage(r.usage),
      warnings,
      response: { id: r.id, modelId: this.modelId, timestamp: new Date(r.created * 1000) },
    };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const { request, warnings } = toChatRequest(options);
    const chunks = (await this.engine.chat.completions.create({
      ...request,
      stream: true,
    })) as AsyncIterable<ChatCompletionChunk>;
    const iterator = chunks[Symbol.asyncIterator]();
    let open: 'text' | 'reasoning' | null = null;
    let part = 0;
    let started = false;
    /** Calls being streamed, by index: their id, name and the arguments so far. */
    const calls: { id: string; name: string; input: string }[] = [];
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      async pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue({ type: 'stream-start', warnings });
        }
        const close = (): void => {
          if (open) controller.enqueue({ type: `${open}-end`, id: String(part) });
          open = null;
        };
        const write = (kind: 'text' | 'reasoning', delta: string): void => {
          if (open !== kind) {
            close();
            part++;
            open = kind;
            controller.enqueue({ type: `${kind}-start`, id: String(part) });
          }
          controller.enqueue({ type: `${kind}-delta`, id: String(part), delta });
        };
        try {
          const step = await iterator.next();
          if (step.done) {
            close();
            controller.close();
            return;
          }
          const c = step.value;
          const choice = c.choices[0];
          if (!choice) return;
          if (choice.delta.reasoning_content) write('reasoning', choice.delta.reasoning_content);
          if (choice.delta.content) write('text', choice.delta.content);
          // Call fragments: the first of an index starts the call, the arguments of each are input deltas.
          for (const frag of choice.delta.tool_calls ?? []) {
            close();
            let call = calls[frag.index];
            if (!call) {
              call = { id: frag.id ?? `call_${frag.index}`, name: frag.function.name ?? '', input: '' };
              calls[frag.index] = call;
              controller.enqueue({ type: 'tool-input-start', id: call.id, toolName: call.name });
            }
            if (frag.function.arguments) {
              call.input += frag.function.arguments;
              controller.enqueue({ type: 'tool-input-delta', id: call.id, delta: frag.function.arguments });
            }
          }
          if (choice.finish_reason) {
            close();
            for (const call of calls) {
              controller.enqueue({ type: 'tool-input-end', id: call.id });
              controller.enqueue({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.input });
            }
            controller.enqueue({ type: 'finish', finishReason: finish(choice.finish_reason), usage: usage(c.usage) });
          }
        } catch (e) {
          controller.enqueue({ type: 'error', error: e });
          controller.close();
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    });
    return { stream };
  }
}

/** A provider: call it (optionally with a model id for display) to get the language model of `engine`. */
export interface WebGGUFProvider {
  (modelId?: string): WebGGUFLanguageModel;
  languageModel(modelId?: string): WebGGUFLanguageModel;
}

/** Creates the AI SDK provider of an `Engine` or `WorkerEngine`. */
export function createWebGGUF(engine: Engine): WebGGUFProvider {
  const make = (modelId?: string): WebGGUFLanguageModel => new WebGGUFLanguageModel(engine, modelId);
  return Object.assign(make, { languageModel: make });
}
