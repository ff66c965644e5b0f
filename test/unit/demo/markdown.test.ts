/**
 * The demo's Markdown renderer: model output is untrusted, so every tag in it must come out escaped, links must be
 * http(s) only, and an unterminated code fence (mid-stream) still renders as a code block.
 */
import { describe, expect, it } from 'vitest';
import { escapeHtml, renderMarkdown } from '../../../demo/ui/markdown';

describe('renderMarkdown', () => {
  it('escapes any HTML the model writes', () => {
    const html = renderMarkdown('<img src=x onerror=alert(1)> <script>alert(1)</script> **<b>x</b>**');
    expect(html).not.toMatch(/<img|<script|<b>/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<strong>&lt;b&gt;x&lt;/b&gt;</strong>');
  });

  it('links only http(s) URLs, with rel=noopener, and cannot break out of the attribute', () => {
    expect(renderMarkdown('[a](javascript:alert(1))')).not.toContain('<a ');
    const html = renderMarkdown('[docs](https://example.com/a"onmouseover="x)');
    expect(html).toContain('href="https://example.com/a&quot;onmouseover=&quot;x"');
    expect(html).toContain('rel="noopener noreferrer"');
  });

  it('renders fenced code (escaped, language kept), inline code, lists and headings', () => {
    const html = renderMarkdown('# Title\n\n```js\nif (a < b) {}\n```\n\n- one `x<y`\n- two\n\n1. first');
    expect(html).toContain('<h3>Title</h3>');
    expect(html).toContain('<pre data-lang="js"><code>if (a &lt; b) {}</code></pre>');
    expect(html).toContain('<ul><li>one <code>x&lt;y</code></li><li>two</li></ul>');
    expect(html).toContain('<ol><li>first</li></ol>');
  });

  it('renders an unterminated fence as an open code block while streaming', () => {
    expect(renderMarkdown('Here:\n```py\nprint(1)')).toContain('<pre data-lang="py"><code>print(1)</code></pre>');
  });

  it('escapeHtml escapes the five special characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});
