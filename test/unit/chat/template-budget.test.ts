/**
 * Hostile chat templates (issue: a template must never kill or hang the engine): every one ends with
 * `LlmError('template')` naming the construct, within a few seconds, and the process goes on rendering.
 */

import { describe, expect, it } from 'vitest';
import { renderChat, type ChatMessage } from '../../../src/chat/index.js';
import { resolveTemplateBudget } from '../../../src/chat/template-budget.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const USER: ChatMessage[] = [{ role: 'user', content: 'hi' }];

function expectTemplateError(template: string, pattern: RegExp, options: Parameters<typeof renderChat>[1] = {}): void {
  const t0 = Date.now();
  const e = thrownLlmError(() => renderChat(USER, { template, ...options }));
  expect(e.code, e.message).toBe('template');
  expect(e.message).toMatch(pattern);
  expect(Date.now() - t0).toBeLessThan(8000); // generous bound for a hang check on a busy machine
}

describe('template budgets', () => {
  it('range(1000000000) is refused before anything is allocated', () => {
    expectTemplateError(
      '{% for i in range(1000000000) %}x{% endfor %}',
      /for … in range\(1000000000\).*line 1.*range\(0, 1000000000, 1\) would produce 1000000000 elements/,
    );
    expectTemplateError('{% set xs = range(1000000000) %}{{ xs | length }}', /would produce 1000000000 elements/);
  });

  it('a string-doubling replace loop stops at the string budget', () => {
    const t =
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s.replace('a', 'aa') + ns.s %}{% endfor %}{{ ns.s | length }}";
    expectTemplateError(t, /a string of \d+ characters \(limit 8000000\)/);
  });

  it('one replace that would build a string over the budget is refused before it runs', () => {
    expectTemplateError(
      "{% set s = 'a' * 100000 %}{{ s.replace('a', s) | length }}",
      /a string of 10000000000 characters/,
    );
    expectTemplateError(
      "{% set s = 'a' * 100000 %}{{ s | replace('a', s) | length }}",
      /a string of 10000000000 characters/,
    );
    expect(
      renderChat(USER, {
        template: "{{ 'abcabc'.replace('b', 'XY') }}|{{ 'aaa' | replace('a', 'b', 2) }}|{{ 'ab'.replace('', '-') }}",
      }).prompt,
    ).toBe('aXYcaXYc|bba|-a-b-');
  });

  it('string repetition beyond the budget', () => {
    expectTemplateError("{{ 'x' * 100000000 }}", /a string of 100000000 characters/);
    expect(renderChat(USER, { template: "{{ 'ab' * 3 }}" }).prompt).toBe('ababab');
  });

  it('two nested range(100000) loops stop at the loop budget', () => {
    expectTemplateError(
      '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
      /more than 250000 loop iterations/,
    );
  });

  it('a long render stops at the wall-time budget', () => {
    const t = '{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}';
    expectTemplateError(t, /longer than 200 ms/, {
      budget: { maxMillis: 200, maxLoopIterations: 1e12, maxOutputChars: 1e9, maxStringChars: 1e9 },
    });
  });

  it('output beyond the budget', () => {
    expectTemplateError(
      '{% for i in range(1000) %}{{ "0123456789" }}{% endfor %}',
      /output of \d+ characters \(limit 5000\)/,
      { budget: { maxOutputChars: 5000 } },
    );
  });

  it('a self-doubling list stops at the list budget; deep parser nesting is a template error', () => {
    expectTemplateError(
      '{% set x = [1] %}{% for i in range(64) %}{% set _ = x.extend(x) %}{% endfor %}{{ x | length }}',
      /a list would hold \d+ elements \(limit 1000000\)/,
    );
    expectTemplateError(
      '{{ ' + '('.repeat(20000) + '1' + ')'.repeat(20000) + ' }}',
      /parsing the chat template failed/,
    );
  });

  it('an aborted signal stops the render with LlmError(aborted)', () => {
    const ac = new AbortController();
    ac.abort(new Error('user left'));
    const e = thrownLlmError(() => renderChat(USER, { template: '{{ 1 }}', signal: ac.signal }));
    expect(e.code).toBe('aborted');
  });

  it('renders normally afterwards, and a real template stays far inside the defaults', () => {
    expect(renderChat(USER, { template: '{% for m in messages %}{{ m.content }}{% endfor %}' }).prompt).toBe('hi');
    expect(() => resolveTemplateBudget({ maxMillis: -1 })).toThrow(/positive/);
  });
});
