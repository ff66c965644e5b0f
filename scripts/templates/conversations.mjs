// The conversations of the chat-template conformance corpus (test/fixtures/templates). Each is an OpenAI-shaped
// request body as POST /apply-template takes it. Shared by the generator (make-renderings.mjs) and the vitest suite.

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Get the current weather in a city',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name, e.g. Paris' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['city'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search',
      description: 'Search the web',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  },
];

const system = { role: 'system', content: 'You are a helpful assistant.' };

/** @type {Record<string, Record<string, unknown>>} */
export const CONVERSATIONS = {
  single: { messages: [{ role: 'user', content: 'Hello!' }] },
  system_multi: {
    messages: [
      system,
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: 'It is 4.' },
      { role: 'user', content: 'And 3+3?' },
    ],
  },
  no_system: {
    messages: [
      { role: 'user', content: 'Hi there' },
      { role: 'assistant', content: 'Hello! How can I help?' },
      { role: 'user', content: 'Tell me a joke.' },
    ],
  },
  thinking_off: {
    messages: [system, { role: 'user', content: 'What is 2+2?' }, { role: 'assistant', content: 'It is 4.' }, { role: 'user', content: 'And 3+3?' }],
    chat_template_kwargs: { enable_thinking: false },
  },
  thinking_on: {
    messages: [{ role: 'user', content: 'Think about 7*6.' }],
    chat_template_kwargs: { enable_thinking: true },
  },
  unicode_jinja: {
    messages: [
      { role: 'user', content: 'Héllo wörld — 你好 🌍 {{ messages }} {% if true %}x{% endif %} {# c #}' },
      { role: 'assistant', content: "Ça va? ✓ {{ '<|im_end|>' }} \\n tab\there" },
      { role: 'user', content: 'multi\nline\n\n  indented' },
    ],
  },
  tools: {
    messages: [system, { role: 'user', content: 'What is the weather in Paris?' }],
    tools,
  },
  tool_calls: {
    messages: [
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temperature": 21, "sky": "sunny"}' },
    ],
    tools,
  },
  tool_calls_done: {
    messages: [
      system,
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Rome", "unit": "celsius"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'Sunny, 21C' },
      { role: 'tool', tool_call_id: 'call_b', content: 'Cloudy, 18C' },
      { role: 'assistant', content: 'Paris is sunny (21C); Rome is cloudy (18C).' },
      { role: 'user', content: 'Thanks!' },
    ],
    tools,
  },
  system_user: { messages: [system, { role: 'user', content: 'Summarise: the cat sat on the mat.' }] },
  developer: { messages: [{ role: 'developer', content: 'Answer tersely.' }, { role: 'user', content: 'Capital of France?' }] },
  typed_content: {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'First part.' }, { type: 'text', text: 'Second part.' }] },
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
    ],
  },
  reasoning_history: {
    messages: [
      { role: 'user', content: 'What is 17*3?' },
      { role: 'assistant', content: '51', reasoning_content: '17*3 = 51.' },
      { role: 'user', content: 'And 17*4?' },
    ],
  },
  quotes_markers: {
    messages: [
      system,
      { role: 'user', content: 'He said "hi" and \'bye\'; path C:\\tmp; tags </s> <|im_end|> <|eot_id|> [INST] end' },
    ],
  },
  agentic: {
    messages: [
      system,
      { role: 'user', content: 'Search for llama.cpp and tell me the weather in Oslo.' },
      {
        role: 'assistant',
        content: 'Let me look that up.',
        reasoning_content: 'I need two tools.',
        tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'search', arguments: '{"query": "llama.cpp"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_9', content: 'llama.cpp is a C/C++ LLM runtime.' },
      { role: 'assistant', content: 'llama.cpp is a C/C++ runtime for LLMs.' },
      { role: 'user', content: 'Now the weather.' },
    ],
    tools,
  },
  tools_thinking_off: {
    messages: [{ role: 'user', content: 'Weather in Rome?' }],
    tools,
    chat_template_kwargs: { enable_thinking: false },
  },
  reasoning_effort: {
    messages: [system, { role: 'user', content: 'Prove that 2 is prime.' }],
    chat_template_kwargs: { reasoning_effort: 'high' },
  },
  tools_unicode: {
    messages: [
      { role: 'user', content: 'Météo à Zürich? 東京も' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c7', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Zürich <&> \\"q\\" 東京", "unit": "celsius"}' } }],
      },
      { role: 'tool', tool_call_id: 'c7', name: 'get_weather', content: '{"temp": "12°C", "note": "<b>bewölkt</b> & kalt"}' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Température en °C — "quoted" <tag> & 東京',
          parameters: { type: 'object', properties: { city: { type: 'string', description: 'Ville / 都市' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city'] },
        },
      },
    ],
  },
  tools_minimal: {
    messages: [{ role: 'user', content: 'Ping it.' }],
    tools: [{ type: 'function', function: { name: 'ping' } }],
  },
  args_object: {
    messages: [
      { role: 'user', content: 'Search for cats.' },
      { role: 'assistant', content: 'Searching.', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'search', arguments: { query: 'cats', limit: 3 } } }] },
      { role: 'tool', tool_call_id: 'c2', content: 'Cats are small felines.' },
      { role: 'assistant', content: 'Cats are small felines.' },
      { role: 'user', content: 'Thanks' },
    ],
    tools,
  },
  empty_content: {
    messages: [
      { role: 'system', content: '' },
      { role: 'user', content: '' },
      { role: 'assistant', content: ' ' },
      { role: 'user', content: '\n' },
    ],
  },
  no_generation_prompt: {
    messages: [system, { role: 'user', content: 'Just render me.' }],
    add_generation_prompt: false,
  },
  kwargs_values: {
    messages: [{ role: 'user', content: 'Budgeted thinking please.' }],
    chat_template_kwargs: { thinking_budget: 512, custom_instructions: 'Be nice.', tools_in_user_message: false },
  },
  think_in_text: {
    messages: [
      { role: 'user', content: 'Explain <think>tags</think> please.' },
      { role: 'assistant', content: '<think>\nhidden\n</think>\n\nThey mark reasoning.' },
      { role: 'user', content: 'Thanks.' },
    ],
    chat_template_kwargs: { enable_thinking: false },
  },
  system_parts: {
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Use English.' }] },
      { role: 'user', content: 'Hi' },
    ],
  },
  tool_no_ids: {
    messages: [
      { role: 'user', content: 'Search llamas.' },
      { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'search', arguments: '{"query": "llamas"}' } }] },
      { role: 'tool', content: 'Llamas are camelids.' },
      { role: 'user', content: 'More?' },
    ],
    tools,
  },
  prefill: {
    messages: [{ role: 'user', content: 'Write a haiku about autumn.' }, { role: 'assistant', content: 'Autumn moon' }],
  },
  prefill_reasoning: {
    messages: [system, { role: 'user', content: 'Write a haiku.' }, { role: 'assistant', content: '', reasoning_content: 'Let me think' }],
  },
};
