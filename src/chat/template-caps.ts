/**
 * What a chat template can do, found as llama.cpp finds it (`common/jinja/caps.cpp`): render small probe
 * conversations and watch which inputs the template reads. A system message whose content is never read means no
 * system role (it is then folded into the first user message); tool-call arguments read as a mapping mean object
 * arguments; content indexed or filtered as a list means typed content parts; and so on. Probe failures are
 * ignored, as there.
 */

import { Environment } from '@huggingface/jinja';
import { isLlmError } from '../errors.js';
import { ChatInterpreter, TemplateBudgetError, TemplateRaise } from './jinja-interpreter.js';
import type { JValue } from './jinja-runtime.js';
import { PROBE_TEMPLATE_BUDGET } from './template-budget.js';
import type { CompiledTemplate } from './template-compile.js';

/** Capabilities of a template (llama.cpp's `jinja::caps`). */
export interface TemplateCaps {
  readonly supportsTools: boolean;
  readonly supportsToolCalls: boolean;
  readonly supportsSystemRole: boolean;
  readonly supportsParallelToolCalls: boolean;
  readonly supportsPreserveReasoning: boolean;
  readonly supportsReasoningEffort: boolean;
  readonly supportsStringContent: boolean;
  readonly supportsTypedContent: boolean;
  readonly supportsObjectArguments: boolean;
}

interface ProbeResult {
  ok: boolean;
  /** The probe overran its budget: the template is hostile, stop probing. */
  overBudget: boolean;
  output: string;
  interp: ChatInterpreter;
  /** The input values as set before the render (a template may rebind the names). */
  inputs: Map<string, JValue>;
}

/** The interpreter's globals (shared by renders and probes). */
export function setGlobals(
  env: Environment,
  interp: ChatInterpreter,
  now: Date,
  strftimeNow: (d: Date, f: string) => string,
): void {
  env.set('false', false);
  env.set('true', true);
  env.set('none', null);
  env.set('False', false);
  env.set('True', true);
  env.set('None', null);
  env.set('range', (...a: number[]) => interp.range(a[0], a[1], a[2]));
  env.set('raise_exception', (message: unknown) => {
    throw new TemplateRaise(String(message));
  });
  env.set('strftime_now', (format: unknown) => strftimeNow(now, String(format)));
}

function probe(t: CompiledTemplate, vars: Record<string, unknown>): ProbeResult {
  const r = probeOnce(t, vars);
  if (r.overBudget) throw new StopProbing();
  return r;
}

function probeOnce(t: CompiledTemplate, vars: Record<string, unknown>): ProbeResult {
  const env = new Environment();
  const interp = new ChatInterpreter(env, { budget: PROBE_TEMPLATE_BUDGET, trackUsage: true });
  setGlobals(env, interp, new Date(), () => '');
  const all: Record<string, unknown> = {
    tools: [],
    bos_token: '',
    eos_token: '',
    add_generation_prompt: true,
    ...vars,
  };
  const inputs = new Map<string, JValue>();
  for (const [k, v] of Object.entries(all)) inputs.set(k, env.set(k, v) as unknown as JValue);
  try {
    const out = interp.run(t.program);
    return {
      ok: true,
      overBudget: false,
      output: String((out as unknown as { value: unknown }).value),
      interp,
      inputs,
    };
  } catch (e) {
    return { ok: false, overBudget: isOverBudget(e), output: '', interp, inputs };
  }
}

/** True when a render failed on its budget (not on the template's own logic). */
export function isOverBudget(e: unknown): boolean {
  return isLlmError(e, 'template') && e.cause instanceof TemplateBudgetError;
}

class StopProbing extends Error {}

const get = (v: JValue | undefined, key: string | number): JValue | undefined => {
  if (!v) return undefined;
  if (typeof key === 'number') return v.type === 'ArrayValue' ? (v.value as JValue[])[key] : undefined;
  return v.type === 'ObjectValue' ? (v.value as Map<string, JValue>).get(key) : undefined;
};
const lookup = (r: ProbeResult, name: string): JValue | undefined => r.inputs.get(name);
const used = (r: ProbeResult, v: JValue | undefined): boolean => v !== undefined && r.interp.used.has(v);
const hasOp = (r: ProbeResult, v: JValue | undefined, op: string): boolean =>
  v !== undefined && r.interp.ops.get(v)?.has(op) === true;

const PROBE_TOOLS = [
  {
    name: 'tool',
    type: 'function',
    function: {
      name: 'tool1',
      description: 'Tool description',
      parameters: {
        type: 'object',
        properties: { arg: { type: 'string', description: 'Arg description' } },
        required: ['arg'],
      },
    },
  },
];

function toolConversation(args: unknown, calls = 1): unknown[] {
  const call = (i: number) => ({ id: `call0000${i}`, type: 'function', function: { name: 'tool1', arguments: args } });
  return [
    { role: 'user', content: 'User message' },
    { role: 'assistant', content: '', tool_calls: Array.from({ length: calls }, (_, i) => call(i + 1)) },
    { role: 'tool', content: 'Tool response', tool_call_id: 'call00001' },
    { role: 'assistant', content: "The tool response was 'tool response'" },
    { role: 'user', content: 'User message' },
  ];
}

const capsCache = new WeakMap<CompiledTemplate, TemplateCaps>();

/** Probes a compiled template (cached per template). */
export function templateCaps(t: CompiledTemplate): TemplateCaps {
  const hit = capsCache.get(t);
  if (hit) return hit;
  const c = defaultCaps();
  try {
    probeAll(t, c);
  } catch (e) {
    if (!(e instanceof StopProbing)) throw e;
    Object.assign(c, defaultCaps()); // a hostile template: its render will fail on its own budget
  }
  capsCache.set(t, c);
  return c;
}

function defaultCaps(): { -readonly [K in keyof TemplateCaps]: TemplateCaps[K] } {
  return {
    supportsTools: true,
    supportsToolCalls: true,
    supportsSystemRole: true,
    supportsParallelToolCalls: true,
    supportsPreserveReasoning: false,
    supportsReasoningEffort: false,
    supportsStringContent: true,
    supportsTypedContent: false,
    supportsObjectArguments: false,
  };
}

function probeAll(t: CompiledTemplate, c: { -readonly [K in keyof TemplateCaps]: TemplateCaps[K] }): void {
  // typed content
  const marker = 'STRING_MARKER';
  let r = probe(t, { messages: [{ role: 'user', content: marker }] });
  let content = get(get(lookup(r, 'messages'), 0), 'content');
  const checksForString = hasOp(r, content, 'test_is_string');
  let asArray = hasOp(r, content, 'selectattr') || hasOp(r, content, 'array_access');
  if (asArray) c.supportsTypedContent = true;
  if (!r.ok) c.supportsStringContent = false;
  else if (asArray && !r.output.includes(marker)) c.supportsStringContent = false;
  if (checksForString) {
    r = probe(t, { messages: [{ role: 'user', content: [] }] });
    content = get(get(lookup(r, 'messages'), 0), 'content');
    asArray = hasOp(r, content, 'selectattr') || hasOp(r, content, 'array_access');
    if (asArray && r.ok) c.supportsTypedContent = true;
  }

  // system role
  r = probe(t, {
    messages: [
      { role: 'system', content: 'System message' },
      { role: 'user', content: 'User message' },
    ],
  });
  if (!used(r, get(get(lookup(r, 'messages'), 0), 'content'))) c.supportsSystemRole = false;

  // tools, single call with object arguments
  r = probe(t, { messages: toolConversation({ arg: 'value' }), tools: PROBE_TOOLS });
  if (r.ok) {
    const tools = lookup(r, 'tools');
    if (!used(r, get(get(get(tools, 0), 'function'), 'name'))) c.supportsTools = false;
    const calls = get(get(lookup(r, 'messages'), 1), 'tool_calls');
    if (!used(r, calls)) c.supportsToolCalls = false;
    else if (used(r, get(get(get(get(calls, 0), 'function'), 'arguments'), 'arg'))) c.supportsObjectArguments = true;
  }
  if (!c.supportsObjectArguments) {
    c.supportsToolCalls = true;
    c.supportsTools = true;
    r = probe(t, { messages: toolConversation('{"arg": "value"}'), tools: PROBE_TOOLS });
    if (!r.ok) {
      c.supportsToolCalls = false;
      c.supportsTools = false;
    } else {
      if (!used(r, get(get(get(lookup(r, 'tools'), 0), 'function'), 'name'))) c.supportsTools = false;
      if (!used(r, get(get(lookup(r, 'messages'), 1), 'tool_calls'))) c.supportsToolCalls = false;
    }
  }

  // parallel calls
  r = probe(t, {
    messages: toolConversation(c.supportsObjectArguments ? { arg: 'value' } : '{"arg": "value"}', 2),
    tools: PROBE_TOOLS,
  });
  if (!r.ok) c.supportsParallelToolCalls = false;
  else if (!used(r, get(get(get(get(lookup(r, 'messages'), 1), 'tool_calls'), 1), 'function')))
    c.supportsParallelToolCalls = false;

  // reasoning kept in history
  const placeholder = '<REASONING_CONTENT_PLACEHOLDER>';
  r = probe(t, {
    messages: [
      { role: 'user', content: 'User message' },
      { role: 'assistant', content: 'Assistant message', reasoning_content: placeholder },
      { role: 'user', content: 'User message' },
      { role: 'assistant', content: 'Assistant message', reasoning_content: 'Reasoning content' },
      { role: 'user', content: 'User message' },
    ],
    enable_thinking: true,
    preserve_thinking: true,
    clear_thinking: false,
    truncate_history_thinking: false,
    drop_thinking: false,
  });
  if (r.output.includes(placeholder)) c.supportsPreserveReasoning = true;

  // reasoning effort
  r = probe(t, {
    messages: [{ role: 'user', content: 'User message' }],
    enable_thinking: true,
    reasoning_effort: 'low',
    reasoning_strength: 'low',
  });
  c.supportsReasoningEffort = used(r, lookup(r, 'reasoning_effort')) || used(r, lookup(r, 'reasoning_strength'));
}
