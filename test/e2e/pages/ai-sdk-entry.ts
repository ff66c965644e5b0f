// Bundled by ai-sdk.spec.ts with Vite: the `ai` package and webgguf's AI SDK provider, exposed on window.aiTest.
import { generateObject, generateText, jsonSchema, streamText, tool } from 'ai';
import { createWebGGUF } from '../../../src/ai-sdk/index.js';

(window as unknown as { aiTest: unknown }).aiTest = {
  generateObject,
  generateText,
  jsonSchema,
  streamText,
  tool,
  createWebGGUF,
};
document.getElementById('status')!.textContent = 'ready';
