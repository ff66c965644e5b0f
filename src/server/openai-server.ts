/**
 * An OpenAI-compatible HTTP server (Node `http`) over an `Engine`: `POST /v1/chat/completions` and
 * `POST /v1/completions` (JSON, or server-sent events with `stream: true`, ending in `data: [DONE]`),
 * `POST /v1/embeddings` (embedding models), `POST /v1/rerank` (rerankers), `GET /v1/models`, `GET /health`. A bearer key is checked when set; bodies over the size limit get 413; malformed
 * JSON gets 400 with an OpenAI-style error object; a client that disconnects aborts its generation; concurrent
 * requests wait in the engine's FIFO queue (429 when it is full).
 */

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Engine } from '../api/engine.js';
import { isLlmError, LlmError } from '../errors.js';

/** Options of `createOpenAiServer`. */
export interface OpenAiServerOptions {
  /** Required `Authorization: Bearer <key>` on /v1 routes (none when absent). */
  readonly apiKey?: string;
  /** `Access-Control-Allow-Origin` value (none when absent: no CORS). */
  readonly cors?: string;
  /** Largest request body, bytes (default 8 MiB). */
  readonly maxBodyBytes?: number;
  /** The model id `/v1/models` lists (default: the engine's model name). */
  readonly modelId?: string;
}

/** OpenAI's error object. */
interface ErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: string;
    readonly param: string | null;
    readonly code: string | null;
  };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

function errorOf(e: unknown): HttpError {
  if (e instanceof HttpError) return e;
  if (isLlmError(e)) {
    const field = typeof e.details?.field === 'string' ? e.details.field : null;
    if (e.code === 'invalid-request' && e.details?.field === 'maxQueue')
      return new HttpError(429, e.message, 'rate_limit_error', 'queue_full');
    if (e.code === 'invalid-request')
      return new HttpError(400, e.message, 'invalid_request_error', 'invalid_request', field);
    if (e.code === 'context-overflow')
      return new HttpError(400, e.message, 'invalid_request_error', 'context_length_exceeded');
    if (e.code === 'aborted') return new HttpError(499, e.message, 'aborted', 'aborted');
    return new HttpError(500, e.message, 'server_error', e.code);
  }
  return new HttpError(500, `internal error: ${e instanceof Error ? e.message : String(e)}`, 'server_error');
}

function body(e: HttpError): ErrorBody {
  return { error: { message: e.message, type: e.type, param: e.param, code: e.code } };
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(
        new HttpError(
          413,
          `request body of ${declared} bytes is over the limit of ${limit} bytes`,
          'invalid_request_error',
          'body_too_large',
        ),
      );
      req.resume();
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(
          new HttpError(
            413,
            `request body is over the limit of ${limit} bytes`,
            'invalid_request_error',
            'body_too_large',
          ),
        );
        req.destroy();
        return;
      }
      parts.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new HttpError(
      400,
      `the request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
      'invalid_request_error',
      'invalid_json',
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new HttpError(400, 'the request body must be a JSON object', 'invalid_request_error', 'invalid_json');
  return v as Record<string, unknown>;
}

/** Creates the server (not listening yet: call `listen`). */
export async function createOpenAiServer(engine: Engine, options: OpenAiServerOptions = {}): Promise<Server> {
  const http = await import('node:http');
  const limit = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const modelId = options.modelId ?? (engine.info.model.name || engine.info.model.identity);
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...(options.cors ? { 'Access-Control-Allow-Origin': options.cors, Vary: 'Origin' } : {}),
    ...extra,
  });
  const send = (res: ServerResponse, status: number, value: unknown): void => {
    if (res.headersSent) {
      res.end();
      return;
    }
    const text = JSON.stringify(value);
    res.writeHead(
      status,
      headers({ 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) }),
    );
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (req.method === 'OPTIONS') {
      res.writeHead(
        204,
        headers({
          'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
          'Access-Control-Allow-Headers': 'Authorization, Content-Type',
          'Access-Control-Max-Age': '600',
        }),
      );
      res.end();
      return;
    }
    if (path === '/health' && req.method === 'GET') return send(res, 200, { status: 'ok' });
    if (options.apiKey !== undefined && path.startsWith('/v1')) {
      const auth = req.headers.authorization ?? '';
      if (auth !== `Bearer ${options.apiKey}`)
        throw new HttpError(
          401,
          'invalid or missing API key (send Authorization: Bearer <key>)',
          'authentication_error',
          'invalid_api_key',
        );
    }
    if (path === '/v1/models' && req.method === 'GET') {
      return send(res, 200, {
        object: 'list',
        data: [{ id: modelId, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'webgguf' }],
      });
    }
    const chat = path === '/v1/chat/completions';
    const embeddings = path === '/v1/embeddings';
    const rerank = path === '/v1/rerank';
    if (!chat && !embeddings && !rerank && path !== '/v1/completions')
      throw new HttpError(404, `no route ${req.method ?? ''} ${path}`, 'invalid_request_error', 'not_found');
    if (req.method !== 'POST')
      throw new HttpError(405, `${path} takes POST`, 'invalid_request_error', 'method_not_allowed');
    const request = parseJson(await readBody(req, limit));
    delete request.signal;
    // The client's disconnect aborts the generation (and frees the queue).
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(new LlmError('aborted', 'the client disconnected'));
    });
    const call = { ...request, signal: controller.signal } as never;
    if (embeddings) return send(res, 200, { ...(await engine.embeddings.create(call)), model: modelId });
    if (rerank) return send(res, 200, { ...(await engine.rerank(call)), model: modelId });
    const result: unknown = chat ? await engine.chat.completions.create(call) : await engine.completions.create(call);
    if (request.stream !== true)
      return send(res, 200, {
        ...(result as object),
        model: typeof request.model === 'string' ? request.model : modelId,
      });
    res.writeHead(
      200,
      headers({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' }),
    );
    try {
      for await (const chunk of result as AsyncIterable<object>) {
        if (controller.signal.aborted) break;
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      res.write('data: [DONE]\n\n');
    } catch (e) {
      if (!controller.signal.aborted) res.write(`data: ${JSON.stringify(body(errorOf(e)))}\n\n`);
    }
    res.end();
  };

  return http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      const err = errorOf(e);
      if (res.headersSent) res.end();
      else send(res, err.status, body(err));
    });
  });
}
