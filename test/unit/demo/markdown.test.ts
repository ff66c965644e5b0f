// @vitest-environment jsdom
/**
 * The demo's Markdown (marked + DOMPurify): model output is untrusted, so every tag in it must come out as text,
 * links must be http(s)/mailto only and keep target=_blank, hrefs must reach the page unchanged (issue #21 item 8:
 * emphasis must never rewrite a link), tables and fenced code render, and an unterminated fence (mid-stream) still
 * renders as a code block.
 */
import { describe, expect, it } from 'vitest';
import { escapeHtml, renderMarkdown } from '../../../demo/ui/markdown';

/** The rendered HTML as a DOM, to check structure rather than serialisation details. */
function dom(markdown: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = renderMarkdown(markdown);
  return div;
}

describe('renderMarkdown', () => {
  it('shows any HTML the model writes as text, never as markup', () => {
    const md =
      '<img src=x onerror=alert(1)> <script>alert(1)</script> **<b>x</b>** <a href="javascript:alert(1)">y</a>\n\n<iframe src="https://evil"></iframe>';
    const html = renderMarkdown(md);
    expect(html).not.toMatch(/<img|<script|<b>|<iframe|<a href="javascript/i);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<strong>&lt;b&gt;x&lt;/b&gt;</strong>');
    const root = dom(md);
    expect(root.querySelectorAll('img, script, iframe, b')).toHaveLength(0);
    expect(root.textContent).toContain('<script>alert(1)</script>');
  });

  it('links only http(s) and mailto URLs, with target=_blank rel=noopener, and cannot break out of the attribute', () => {
    for (const bad of [
      '[a](javascript:alert(1))',
      '[a](JaVaScRiPt:alert(1))',
      '[a](data:text/html,<script>x</script>)',
      '[a](vbscript:x)',
      '<javascript:alert(1)>',
      '![i](javascript:alert(1))',
    ]) {
      expect(dom(bad).querySelector('a'), bad).toBeNull();
    }
    const a = dom('[docs](https://example.com/a"onmouseover="x)').querySelector('a');
    expect(a?.getAttribute('onmouseover')).toBeNull();
    expect(a?.getAttribute('rel')).toBe('noopener noreferrer');
    expect(a?.getAttribute('target')).toBe('_blank');
    expect(dom('[mail](mailto:a@b.c)').querySelector('a')?.getAttribute('href')).toBe('mailto:a@b.c');
    // Images never load (tracking): they become links.
    const img = dom('![pixel](https://tracker.example/p.png)');
    expect(img.querySelector('img')).toBeNull();
    expect(img.querySelector('a')?.getAttribute('href')).toBe('https://tracker.example/p.png');
  });

  it('keeps links intact around and inside emphasis (issue #21 item 8)', () => {
    const cases: [string, string, string][] = [
      ['*see [the_docs](https://x.org/a_b_c) now*', 'https://x.org/a_b_c', 'the_docs'],
      ['[**bold** and _it_](https://x.org/p?q=*star*&r=_u_)', 'https://x.org/p?q=*star*&r=_u_', 'bold and it'],
      ['_[under](https://x.org/_blank_/x_y)_', 'https://x.org/_blank_/x_y', 'under'],
      ['**[strong](https://x.org/**a**)** tail', 'https://x.org/**a**', 'strong'],
      [
        'visit https://x.org/_snake_case_/path and *more*',
        'https://x.org/_snake_case_/path',
        'https://x.org/_snake_case_/path',
      ],
    ];
    for (const [md, href, text] of cases) {
      const root = dom(md);
      const links = root.querySelectorAll('a');
      expect(links, md).toHaveLength(1);
      expect(links[0].getAttribute('href'), md).toBe(href);
      expect(links[0].getAttribute('target'), md).toBe('_blank');
      expect(links[0].getAttribute('rel'), md).toBe('noopener noreferrer');
      expect(links[0].textContent, md).toBe(text);
      // Nothing leaks into attributes, and the serialised markup is balanced.
      expect(renderMarkdown(md)).not.toMatch(/="[^"]*<\/?(em|strong)/);
      const again = document.createElement('div');
      again.innerHTML = root.innerHTML;
      expect(again.innerHTML).toBe(root.innerHTML);
    }
  });

  it('renders fenced code (escaped, language kept), inline code, lists, headings and tables', () => {
    const root = dom(
      '# Title\n\n```js\nif (a < b) {}\n```\n\n- one `x<y`\n- two\n\n1. first\n\n| a | b |\n|---|---|\n| 1 | 2 |',
    );
    expect(root.querySelector('h3')?.textContent).toBe('Title');
    const pre = root.querySelector('pre');
    expect(pre?.getAttribute('data-lang')).toBe('js');
    expect(pre?.querySelector('code')?.textContent).toBe('if (a < b) {}');
    expect(root.querySelector('ul')?.innerHTML).toContain('<code>x&lt;y</code>');
    expect(root.querySelectorAll('ul > li')).toHaveLength(2);
    expect(root.querySelector('ol > li')?.textContent).toBe('first');
    expect(Array.from(root.querySelectorAll('table td'), (td) => td.textContent)).toEqual(['1', '2']);
  });

  it('renders an unterminated fence as an open code block while streaming', () => {
    const pre = dom('Here:\n```py\nprint(1)').querySelector('pre');
    expect(pre?.getAttribute('data-lang')).toBe('py');
    expect(pre?.textContent).toBe('print(1)');
  });

  it('escapeHtml escapes the five special characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});
