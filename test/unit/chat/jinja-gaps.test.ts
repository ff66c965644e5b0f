/**
 * Constructs llama.cpp's Jinja engine renders and @huggingface/jinja 0.5.11 alone rejects (each seen in a real
 * template of llama.cpp's corpus), one test per construct, through `renderChat`.
 */

import { describe, expect, it } from 'vitest';
import { renderChat, type ChatMessage } from '../../../src/chat/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const USER: ChatMessage[] = [{ role: 'user', content: 'hi' }];
const render = (template: string, extra: Parameters<typeof renderChat>[1] = {}): string =>
  renderChat(USER, { template, ...extra }).prompt;

describe('Jinja constructs llama.cpp accepts', () => {
  it('integer dictionary keys, kept as integers by dictsort / items / iteration / lookup (Seed-OSS)', () => {
    const t =
      '{%- set gears = {0: 0, 512: 128, 1024: 256} -%}{%- set ns = namespace(v=none) -%}' +
      '{%- for k, v in gears | dictsort -%}{%- if ns.v is none and 600 <= k -%}{%- set ns.v = v -%}{%- endif -%}{%- endfor -%}' +
      '{{ ns.v }}|{{ gears[512] }}|{% for k in gears %}{{ k + 1 }},{% endfor %}|{% for k, v in gears.items() %}{{ k * 2 }};{% endfor %}|{{ gears.get(1024) }}';
    expect(render(t)).toBe('256|128|1,513,1025,|0;1024;2048;|256');
  });

  it('selectattr / map / items on none give an empty list (Functionary v3.1)', () => {
    expect(
      render(
        '{% set x = none %}[{{ x | selectattr("type", "equalto", "code") | list | length }}]{% for i in x | items %}!{% endfor %}',
      ),
    ).toBe('[0]');
  });

  it('length and other filters of an undefined value give empty values (Apriel 1.5)', () => {
    expect(
      render('{{ nothing | length }}|{{ nothing | join(",") }}|{{ nothing | upper }}|{{ nothing | list | length }}'),
    ).toBe('0|||0');
  });

  it('methods of undefined / none give empty values (Seed-OSS: a tool without parameters)', () => {
    expect(
      render(
        '{% set p = {} %}[{% for k, v in p.properties.items() %}{{ k }}{% endfor %}]{{ p.missing.items() | length }}{% set n = none %}{{ n.items() | length }}',
      ),
    ).toBe('[]00');
  });

  it("string methods the library lacks: str.format (Hunyuan Hy3's '<｜hy_eos{}｜>'.format(t))", () => {
    expect(
      render("{{ '<x{}>'.format('A') }}{{ '{0}-{1}-{name}'.format(1, 'b', name='n') }}{{ '{{}}'.format() }}"),
    ).toBe('<xA>1-b-n{}');
  });

  it('for over an undefined value iterates nothing (Hermes 2 Pro / Command R+ tool_use without tools)', () => {
    expect(render('[{% for t in tools_missing %}{{ t }}{% else %}none{% endfor %}]')).toBe('[none]');
  });

  it('+ and ~ between a string and none / undefined concatenate with "" (Firefunction v2)', () => {
    expect(render("{{ 'a' + missing }}|{{ missing + 'b' }}|{{ none ~ 'c' }}|{{ 'd' + none }}")).toBe('a|b|c|d');
  });

  it('list append / pop / extend / insert mutate the list (Kimi K2)', () => {
    expect(
      render(
        '{% set q = namespace(ids=[]) %}{% set _ = q.ids.append("a") %}{% set _ = q.ids.append("b") %}{% set _ = q.ids.extend(["c"]) %}{% set _ = q.ids.insert(0, "z") %}{{ q.ids.pop(0) }}{{ q.ids | join }}{{ q.ids.pop() }}',
      ),
    ).toBe('zabcc');
  });

  it('tuples in list literals unpack in for loops (Functionary v3.2)', () => {
    expect(render('{% for a, b in [("x", "X"), ("y", "Y")] %}{{ a }}{{ b }}{% endfor %}')).toBe('xXyY');
  });

  it('min / max filters (MiniCPM 5)', () => {
    expect(render('{{ [3, 1, 2] | min }}{{ [3, 1, 2] | max }}{{ ["b", "a"] | min }}')).toBe('13a');
  });

  it("string of a mapping or list is Python's repr (Apriel tools)", () => {
    expect(render(`{{ {'a': 1, 'b': [true, none, "it's"]} | string }}`)).toBe(`{'a': 1, 'b': [True, None, "it's"]}`);
  });

  it('strip / lstrip / rstrip / trim take the chars argument and strip ASCII whitespace only (SmolLM3, QwQ)', () => {
    expect(
      render(
        "[{{ ' \\n x \\n'.lstrip('\\n') }}][{{ '--x--'.strip('-') }}][{{ 'x\\n '.rstrip() }}][{{ '\u00a0x ' | trim }}][{{ 'aab' | trim('a') }}]",
      ),
    ).toBe('[ \n x \n][x][x][\u00a0x][b]');
  });

  it('string filters turn a list or mapping into its string form first (Gemma 4 with typed system content)', () => {
    expect(
      render("{{ [{'type': 'text', 'text': 'a'}] | trim }}|{{ {'k': 1} | upper }}|{{ 12 | replace('1', 'x') }}"),
    ).toBe("[{'type': 'text', 'text': 'a'}]|{'K': 1}|x2");
  });

  it('a template that does not parse names the line', () => {
    const e = thrownLlmError(() => render('a\nb {{ x }}\n{% if x %}\n{{ y + }}\n{% endif %}'));
    expect(e.code).toBe('template');
    expect(e.message).toMatch(/parsing the chat template failed near line 4: Unexpected token/);
    expect(thrownLlmError(() => render('line1\n{% for m in messages %}\n{{ m }}\n')).message).toMatch(
      /near line 4: the template ends inside an open block/,
    );
  });

  it('still rejects what llama.cpp rejects, as LlmError(template) naming the construct and line', () => {
    const e = thrownLlmError(() => render('line one\n{% for m in messages %}\n{{ m.content - 1 }}\n{% endfor %}'));
    expect(e.code).toBe('template');
    expect(e.message).toMatch(/for … in messages.*line 2/);
    expect(e.details).toMatchObject({ line: 2 });
  });
});
