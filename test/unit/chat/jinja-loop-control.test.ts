/**
 * `{% continue %}` / `{% break %}` keep what the iteration wrote before them, as Jinja2 does (and as EXAONE 4's
 * template needs for its system turn): `@huggingface/jinja` drops that text when the statement sits in a nested block.
 */

import { describe, expect, it } from 'vitest';
import { renderChat } from '../../../src/chat/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const render = (template: string) => renderChat([{ role: 'user', content: 'hi' }], { template }).prompt;

describe('loop control in chat templates', () => {
  it('continue keeps the text written before it, in the body and in nested ifs', () => {
    expect(
      render(
        '{% for i in [1, 2, 3] %}<{{ i }}{% if i == 2 %}!{% if true %}?{% continue %}{% endif %}{% endif %}>{% endfor %}',
      ),
    ).toBe('<1><2!?<3>');
  });

  it('break keeps the text written before it and ends only the innermost loop', () => {
    const t =
      '{% for a in [1, 2] %}[{% for b in [1, 2, 3] %}{{ a }}{{ b }}{% if b == 2 %}.{% break %}{% endif %},{% endfor %}]{% endfor %}';
    expect(render(t)).toBe('[11,12.][21,22.]');
  });

  it('an iteration that continues counts as an iteration (no else block)', () => {
    expect(render('{% for i in [1] %}a{% continue %}{% else %}empty{% endfor %}')).toBe('a');
    expect(render('{% for i in [] %}a{% else %}empty{% endfor %}')).toBe('empty');
  });

  it('loop variables and namespaces updated before a continue are kept', () => {
    const t =
      '{% set ns = namespace(n=0) %}{% for i in range(5) %}{% set ns.n = ns.n + i %}{% if i is odd %}{% continue %}{% endif %}{{ i }}{% endfor %}={{ ns.n }}';
    expect(render(t)).toBe('024=10');
  });

  it('continue outside a loop is a template error', () => {
    expect(thrownLlmError(() => render('a{% if true %}{% continue %}{% endif %}')).code).toBe('template');
  });
});
