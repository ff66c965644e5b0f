/**
 * Model outputs and llama.cpp's expected messages for them (facts restated from llama.cpp's tests/test-chat.cpp, per
 * corpus template), plus unicode / nested-JSON / parallel variants of each syntax; read by
 * llama-cpp-chat-examples.test.ts.
 */

import type { ToolFunction } from '../../../src/tools/tool-spec.js';

const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
});
export const TOOLS: Record<string, ToolFunction> = {
  special_function: { name: 'special_function', parameters: obj({ arg1: { type: 'integer' } }, ['arg1']) },
  special_function_with_opt: {
    name: 'special_function_with_opt',
    parameters: obj({ arg1: { type: 'integer' }, arg2: { type: 'integer' } }, ['arg1']),
  },
  python: { name: 'python', parameters: obj({ code: { type: 'string' } }, ['code']) },
  edit: {
    name: 'edit',
    parameters: obj({ filename: { type: 'string' }, oldString: { type: 'string' }, newString: { type: 'string' } }),
  },
  run_in_terminal: { name: 'run_in_terminal', parameters: obj({ command: { type: 'string' } }, ['command']) },
  empty_args: { name: 'empty_args', parameters: obj({}) },
  get_time: { name: 'get_time', parameters: obj({ city: { type: 'string' } }, ['city']) },
  todo_list: {
    name: 'todo_list',
    parameters: obj({
      todos: { type: 'array', items: obj({ item: { type: 'string' }, selected: { type: 'boolean' } }) },
    }),
  },
};

export interface Call {
  readonly name: string;
  readonly args: unknown;
  readonly id?: string;
}
/** One example: the template, the thinking switch, the output and llama.cpp's expected message. */
export interface Example {
  readonly template: string;
  readonly thinking?: boolean;
  readonly tools?: readonly string[];
  readonly output: string;
  readonly content?: string;
  readonly reasoning?: string;
  readonly calls?: readonly Call[];
}

const call = (name: string, args: unknown, id?: string): Call => ({ name, args, ...(id ? { id } : {}) });
const ARG1 = [call('special_function', { arg1: 1 })];
const QWEN_CALL =
  '<tool_call>\n<function=special_function>\n<parameter=arg1>\n1\n</parameter>\n</function>\n</tool_call>';
const xmlCall = (name: string, params: [string, string][]) =>
  `<tool_call>\n<function=${name}>\n${params.map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`).join('')}</function>\n</tool_call>`;

export const EXAMPLES: readonly Example[] = [
  // Qwen3.5 (Qwen3-Coder XML calls, thinking template)
  ...['Qwen3.5-4B', 'Qwen3-Coder', 'NVIDIA-Nemotron-3-Nano-30B-A3B-BF16'].flatMap((template): Example[] => [
    { template, thinking: false, tools: ['special_function'], output: QWEN_CALL, calls: ARG1 },
    {
      template,
      thinking: false,
      tools: ['special_function', 'special_function_with_opt'],
      output: `${QWEN_CALL}\n${xmlCall('special_function_with_opt', [
        ['arg1', '1'],
        ['arg2', '2'],
      ])}`,
      calls: [...ARG1, call('special_function_with_opt', { arg1: 1, arg2: 2 })],
    },
    {
      template,
      thinking: false,
      tools: ['python'],
      output: xmlCall('python', [['code', 'def hello():\n    print("Hello, world!")\n\nhello()']]),
      calls: [call('python', { code: 'def hello():\n    print("Hello, world!")\n\nhello()' })],
    },
    {
      template,
      thinking: false,
      tools: ['edit'],
      output: xmlCall('edit', [
        ['filename', 'foo.c'],
        ['oldString', '#iclunde'],
        ['newString', '#include\n'],
      ]),
      calls: [call('edit', { filename: 'foo.c', oldString: '#iclunde', newString: '#include\n' })],
    },
    {
      template,
      thinking: false,
      tools: ['python'],
      output: xmlCall('python', [['code', '    print("Hello, world!")']]),
      calls: [call('python', { code: '    print("Hello, world!")' })],
    },
    {
      template,
      thinking: false,
      tools: ['empty_args'],
      output: '<tool_call>\n<function=empty_args>\n</function>\n</tool_call>',
      calls: [call('empty_args', {})],
    },
  ]),
  // Qwen3-Coder: the first call's <tool_call> may be missing
  {
    template: 'Qwen3-Coder',
    tools: ['special_function'],
    output: '<function=special_function>\n<parameter=arg1>\n1\n</parameter>\n</function>\n</tool_call>',
    calls: ARG1,
  },
  {
    template: 'Qwen3-Coder',
    tools: ['special_function'],
    output:
      'Let me call it.\n<function=special_function>\n<parameter=arg1>\n1\n</parameter>\n</function>\n</tool_call>',
    content: 'Let me call it.',
    calls: ARG1,
  },
  {
    template: 'Qwen3-Coder',
    tools: ['special_function', 'special_function_with_opt'],
    output: `<function=special_function>\n<parameter=arg1>\n1\n</parameter>\n</function>\n</tool_call>\n${xmlCall(
      'special_function_with_opt',
      [
        ['arg1', '1'],
        ['arg2', '2'],
      ],
    )}`,
    calls: [...ARG1, call('special_function_with_opt', { arg1: 1, arg2: 2 })],
  },
  {
    template: 'Qwen3-Coder',
    tools: ['edit'],
    output: xmlCall('edit', [
      ['newString', '#include'],
      ['filename', 'foo.c'],
      ['oldString', '#iclunde'],
    ]),
    calls: [call('edit', { newString: '#include', filename: 'foo.c', oldString: '#iclunde' })],
  },
  {
    template: 'Qwen3.5-4B',
    thinking: true,
    output: "I'm\nthinking\n</think>\n\nHello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
  },
  {
    template: 'Qwen3.5-4B',
    thinking: true,
    tools: ['special_function'],
    output: `I'm\nthinking\n</think>\n\n${QWEN_CALL}`,
    reasoning: "I'm\nthinking",
    calls: ARG1,
  },
  {
    template: 'Qwen3.5-4B',
    thinking: true,
    tools: ['run_in_terminal'],
    output: xmlCall('run_in_terminal', [['command', 'pwd']]),
    calls: [call('run_in_terminal', { command: 'pwd' })],
  },
  {
    template: 'Qwen3.5-4B',
    thinking: true,
    tools: ['run_in_terminal'],
    output: `Need to inspect the current directory.\n${xmlCall('run_in_terminal', [['command', 'pwd']])}`,
    reasoning: 'Need to inspect the current directory.',
    calls: [call('run_in_terminal', { command: 'pwd' })],
  },
  {
    template: 'Qwen3.5-4B',
    thinking: true,
    tools: ['special_function'],
    output: `</think>\n\n${QWEN_CALL}`,
    calls: ARG1,
  },
  // Hermes-style JSON in <tool_call> (Hermes 2 Pro / 3, Qwen2.5, MiMo-VL, Granite 4.x)
  ...[
    'NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use',
    'NousResearch-Hermes-3-Llama-3.1-8B-tool_use',
    'Qwen-Qwen2.5-7B-Instruct',
    'MiMo-VL',
    'ibm-granite-granite-4.0',
    'ibm-granite-granite-4.1',
  ].flatMap((template): Example[] => [
    { template, output: "Hello, world!\nWhat's up?", content: "Hello, world!\nWhat's up?" },
    {
      template,
      tools: ['special_function'],
      output: '<tool_call>\n{"name": "special_function", "arguments": {"arg1": 1}}\n</tool_call>',
      calls: ARG1,
    },
    {
      template,
      tools: ['special_function'],
      output:
        'Hello, world!\nWhat\'s up?<tool_call>\n{"name": "special_function", "arguments": {"arg1": 1}}</tool_call>',
      content: "Hello, world!\nWhat's up?",
      calls: ARG1,
    },
  ]),
  // Mistral
  {
    template: 'mistralai-Mistral-Nemo-Instruct-2407',
    tools: ['special_function'],
    output: '[TOOL_CALLS][{"name": "special_function", "arguments": {"arg1": 1}, "id": "123456789"}]',
    calls: [call('special_function', { arg1: 1 }, '123456789')],
  },
  {
    template: 'Mistral-Small-3.2-24B-Instruct-2506',
    tools: ['special_function'],
    output: '[TOOL_CALLS]special_function[CALL_ID]123456789[ARGS]{"arg1": 1}',
    calls: [call('special_function', { arg1: 1 }, '123456789')],
  },
  {
    template: 'Mistral-Small-3.2-24B-Instruct-2506',
    tools: ['special_function', 'special_function_with_opt'],
    output:
      '[TOOL_CALLS]special_function[CALL_ID]000000001[ARGS]{"arg1": 1}' +
      '[TOOL_CALLS]special_function_with_opt[CALL_ID]000000002[ARGS]{"arg1": 1, "arg2": 2}',
    calls: [
      call('special_function', { arg1: 1 }, '000000001'),
      call('special_function_with_opt', { arg1: 1, arg2: 2 }, '000000002'),
    ],
  },
  {
    template: 'unsloth-mistral-Devstral-Small-2507',
    tools: ['special_function'],
    output: 'Hello, world!\nWhat\'s up?[TOOL_CALLS]special_function[ARGS]{"arg1": 1}',
    content: "Hello, world!\nWhat's up?",
    calls: ARG1,
  },
  // gpt-oss (harmony channels; the prompt ends with `<|start|>assistant`)
  ...(
    [
      ["<|channel|>final<|message|>Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?"],
      ["<|channel|>commentary<|message|>Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?"],
    ] as const
  ).map(([output, content]): Example => ({ template: 'openai-gpt-oss-120b', output, content })),
  {
    template: 'openai-gpt-oss-120b',
    output:
      "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>final<|message|>Hello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
  },
  ...[
    ' to=functions.special_function<|channel|>analysis<|message|>{"arg1": 1}',
    '<|channel|>analysis to=functions.special_function<|message|>{"arg1": 1}',
    ' to=functions.special_function<|channel|>analysis <|constrain|>json<|message|>{"arg1": 1}',
    '<|channel|>commentary to=functions.special_function<|message|>{"arg1": 1}',
  ].map((output): Example => ({ template: 'openai-gpt-oss-120b', tools: ['special_function'], output, calls: ARG1 })),
  {
    template: 'openai-gpt-oss-120b',
    tools: ['special_function'],
    output:
      '<|channel|>analysis<|message|>I\'m\nthinking<|end|><|start|>assistant to=functions.special_function<|channel|>analysis<|message|>{"arg1": 1}',
    reasoning: "I'm\nthinking",
    calls: ARG1,
  },
  // LFM2.5 (Pythonic calls between <|tool_call_start|> and <|tool_call_end|>)
  {
    template: 'LFM2.5-8B-A1B',
    tools: ['special_function'],
    output: "<think>I'm\nthinking</think><|tool_call_start|>[special_function(arg1=1)]<|tool_call_end|>",
    reasoning: "I'm\nthinking",
    calls: ARG1,
  },
  {
    template: 'LFM2.5-8B-A1B',
    tools: ['get_time'],
    output:
      '<think>I need to call a function</think>Let me check the time.<|tool_call_start|>[get_time(city="Paris")]<|tool_call_end|>',
    reasoning: 'I need to call a function',
    content: 'Let me check the time.',
    calls: [call('get_time', { city: 'Paris' })],
  },
  {
    template: 'LFM2.5-8B-A1B',
    tools: ['special_function'],
    output:
      '<think>Let me think about <|tool_call_start|>[special_function(arg1=1)]<|tool_call_end|> hmm</think><|tool_call_start|>[special_function(arg1=1)]<|tool_call_end|>',
    reasoning: 'Let me think about <|tool_call_start|>[special_function(arg1=1)]<|tool_call_end|> hmm',
    calls: ARG1,
  },
  // Gemma 4 (`<|channel>thought…<channel|>` reasoning, `<|tool_call>call:f{…}<tool_call|>` calls)
  {
    template: 'google-gemma-4-31B-it',
    output: "<|channel>thought\nI'm\nthinking<channel|>Hello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
  },
  {
    template: 'google-gemma-4-31B-it',
    output: "<|channel>thought<channel|>Hello, world!\nWhat's up?",
    content: "Hello, world!\nWhat's up?",
  },
  ...(
    [
      ['<|tool_call>call:get_time{city:<|"|>London<|"|>}<tool_call|>', '', [call('get_time', { city: 'London' })]],
      ['<|tool_call>call:empty_args{}<tool_call|>', '', [call('empty_args', {})]],
      [
        'Hello, world!\nWhat\'s up?<|tool_call>call:get_time{city:<|"|>Paris<|"|>}<tool_call|>',
        "Hello, world!\nWhat's up?",
        [call('get_time', { city: 'Paris' })],
      ],
      ['<|tool_call>call:special_function{arg1:-7}<tool_call|>', '', [call('special_function', { arg1: -7 })]],
    ] as const
  ).map(
    ([output, content, calls]): Example => ({
      template: 'google-gemma-4-31B-it',
      tools: ['get_time', 'empty_args', 'special_function'],
      output,
      content,
      calls,
    }),
  ),
  {
    template: 'google-gemma-4-31B-it',
    tools: ['get_time'],
    output: '<|channel>thought\nI\'m\nthinking<channel|><|tool_call>call:get_time{city:<|"|>Paris<|"|>}<tool_call|>',
    reasoning: "I'm\nthinking",
    calls: [call('get_time', { city: 'Paris' })],
  },
  // Ministral 3 Reasoning ([THINK]…[/THINK], [TOOL_CALLS]f[ARGS]{…})
  {
    template: 'mistralai-Ministral-3-14B-Reasoning-2512',
    thinking: true,
    output: "[THINK]I'm\nthinking[/THINK]Hello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
  },
  {
    template: 'mistralai-Ministral-3-14B-Reasoning-2512',
    thinking: true,
    tools: ['special_function'],
    output: '[THINK]I\'m\nthinking[/THINK][TOOL_CALLS]special_function[ARGS]{"arg1":1}',
    reasoning: "I'm\nthinking",
    calls: ARG1,
  },
  // ByteDance Seed-OSS (<seed:tool_call> around Qwen-style function/parameter tags, values written bare)
  {
    template: 'ByteDance-Seed-OSS',
    output: "<seed:think>I'm thinking about the answer</seed:think>\nHello, world!",
    reasoning: "I'm thinking about the answer",
    content: 'Hello, world!',
  },
  {
    template: 'ByteDance-Seed-OSS',
    tools: ['special_function'],
    output:
      '<seed:tool_call>\n<function=special_function>\n<parameter=arg1>1</parameter>\n</function>\n</seed:tool_call>',
    calls: ARG1,
  },
  {
    template: 'ByteDance-Seed-OSS',
    tools: ['special_function', 'special_function_with_opt'],
    output:
      '<seed:tool_call>\n<function=special_function>\n<parameter=arg1>1</parameter>\n</function>\n</seed:tool_call>\n' +
      '<seed:tool_call>\n<function=special_function_with_opt>\n<parameter=arg1>1</parameter>\n<parameter=arg2>2</parameter>\n</function>\n</seed:tool_call>',
    calls: [...ARG1, call('special_function_with_opt', { arg1: 1, arg2: 2 })],
  },
  {
    template: 'ByteDance-Seed-OSS',
    tools: ['todo_list'],
    output:
      '<seed:tool_call>\n<function=todo_list>\n<parameter=todos>[{"item": "Check stuff", "selected": false}, {"item": "Prepare stuff", "selected": true}]</parameter>\n</function>\n</seed:tool_call>',
    calls: [
      call('todo_list', {
        todos: [
          { item: 'Check stuff', selected: false },
          { item: 'Prepare stuff', selected: true },
        ],
      }),
    ],
  },
  {
    template: 'ByteDance-Seed-OSS',
    tools: ['edit'],
    output:
      '<seed:tool_call>\n<function=edit>\n<parameter=filename>foo.cpp</parameter>\n' +
      '<parameter=oldString>def foo(arg = "14"):\n    return arg + "bar"\n</parameter>\n' +
      '<parameter=newString>def foo(arg = "15"):\n    pass\n</parameter>\n</function>\n</seed:tool_call>',
    calls: [
      call('edit', {
        filename: 'foo.cpp',
        oldString: 'def foo(arg = "14"):\n    return arg + "bar"\n',
        newString: 'def foo(arg = "15"):\n    pass\n',
      }),
    ],
  },
  // Beyond llama.cpp's examples: unicode and nested JSON arguments in each JSON syntax, parallel calls
  ...(
    [
      [
        'Qwen-Qwen2.5-7B-Instruct',
        `<tool_call>\n{"name": "edit", "arguments": ${'{"filename": "ünï/😀.txt", "oldString": "{\\"a\\": [1, {\\"b\\": null}]}", "newString": "日本語\\n\\t\\u00e9"}'}}\n</tool_call>`,
      ],
      [
        'meta-llama-Llama-3.1-8B-Instruct',
        `<|python_tag|>{"name": "edit", "parameters": ${'{"filename": "ünï/😀.txt", "oldString": "{\\"a\\": [1, {\\"b\\": null}]}", "newString": "日本語\\n\\t\\u00e9"}'}}`,
      ],
      [
        'mistralai-Mistral-Nemo-Instruct-2407',
        `[TOOL_CALLS][{"name": "edit", "arguments": ${'{"filename": "ünï/😀.txt", "oldString": "{\\"a\\": [1, {\\"b\\": null}]}", "newString": "日本語\\n\\t\\u00e9"}'}}]`,
      ],
      [
        'Mistral-Small-3.2-24B-Instruct-2506',
        `[TOOL_CALLS]edit[ARGS]${'{"filename": "ünï/😀.txt", "oldString": "{\\"a\\": [1, {\\"b\\": null}]}", "newString": "日本語\\n\\t\\u00e9"}'}`,
      ],
      [
        'openai-gpt-oss-120b',
        `<|channel|>commentary to=functions.edit <|constrain|>json<|message|>${'{"filename": "ünï/😀.txt", "oldString": "{\\"a\\": [1, {\\"b\\": null}]}", "newString": "日本語\\n\\t\\u00e9"}'}<|call|>`,
      ],
      [
        'Qwen3-Coder',
        xmlCall('edit', [
          ['filename', 'ünï/😀.txt'],
          ['oldString', '{"a": [1, {"b": null}]}'],
          ['newString', '日本語\n\té'],
        ]),
      ],
    ] as const
  ).map(
    ([template, output]): Example => ({
      template,
      tools: ['edit'],
      output,
      calls: [call('edit', { filename: 'ünï/😀.txt', oldString: '{"a": [1, {"b": null}]}', newString: '日本語\n\té' })],
    }),
  ),
  {
    template: 'meta-llama-Llama-3.1-8B-Instruct',
    tools: ['special_function'],
    output: '{"name": "special_function", "parameters": {"arg1": 1}}',
    calls: ARG1,
  },
  {
    template: 'ibm-granite-granite-3.3-2B-Instruct',
    tools: ['special_function', 'special_function_with_opt'],
    output:
      '<|tool_call|>[{"name": "special_function", "arguments": {"arg1": 1}}, {"name": "special_function_with_opt", "arguments": {"arg1": 1, "arg2": 2}}]',
    calls: [...ARG1, call('special_function_with_opt', { arg1: 1, arg2: 2 })],
  },
];
