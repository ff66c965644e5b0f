/**
 * Markdown of chat answers, rendered by well-kept libraries: `marked` (GitHub-flavoured: tables, fenced code, lists,
 * autolinks) and `DOMPurify` (the sanitiser, last word on what reaches the page), with `highlight.js` loaded lazily
 * (core and each of 14 common languages in chunks of their own, fetched when a block needs them) to colour finished code blocks. Model output is untrusted: any HTML it
 * writes is shown as text, links are kept only for http, https and mailto (opening in a new tab, rel=noopener
 * noreferrer), images become links (a remote image would be a tracking beacon), and an unterminated code fence
 * (mid-stream) renders as an open code block.
 */
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for use in HTML content or attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const SAFE_URL = /^(?:https?:|mailto:)/i;

function safeHref(href: string): string | null {
  const trimmed = href.trim();
  return SAFE_URL.test(trimmed) ? trimmed : null;
}

const marked = new Marked({ gfm: true, breaks: true, async: false });
marked.use({
  renderer: {
    // Raw HTML in model output is text to show, never markup.
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    heading(token: Tokens.Heading): string {
      const level = Math.min(6, token.depth + 2); // answers sit under the page's own headings
      return `<h${level}>${this.parser.parseInline(token.tokens)}</h${level}>\n`;
    },
    code(token: Tokens.Code): string {
      const lang = (token.lang ?? '')
        .trim()
        .split(/\s+/)[0]
        .replace(/[^\w+#.-]/g, '');
      const attrs = lang ? ` data-lang="${escapeHtml(lang)}"` : '';
      const cls = lang ? ` class="language-${escapeHtml(lang)}"` : '';
      return `<pre${attrs}><code${cls}>${escapeHtml(token.text)}</code></pre>\n`;
    },
    link(token: Tokens.Link): string {
      const label = this.parser.parseInline(token.tokens);
      const href = safeHref(token.href);
      if (href === null) return label;
      return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${label}</a>`;
    },
    image(token: Tokens.Image): string {
      const href = safeHref(token.href);
      const label = escapeHtml(token.text || token.href);
      return href === null
        ? label
        : `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${label}</a>`;
    },
  },
});

const PURIFY_CONFIG = {
  ALLOWED_TAGS: [
    'p',
    'br',
    'hr',
    'strong',
    'em',
    'del',
    's',
    'code',
    'pre',
    'blockquote',
    'ul',
    'ol',
    'li',
    'a',
    'h3',
    'h4',
    'h5',
    'h6',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'span',
    'sup',
    'sub',
  ],
  ALLOWED_ATTR: ['href', 'target', 'rel', 'class', 'data-lang', 'align', 'start'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
};

let hooked = false;
function purify(html: string): string {
  if (!hooked) {
    // Every surviving link opens in a new tab without access to this page.
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.nodeName === 'A') {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
    hooked = true;
  }
  return DOMPurify.sanitize(html, PURIFY_CONFIG);
}

/** Renders Markdown to sanitised HTML. */
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown.replace(/\r\n?/g, '\n')) as string;
  return purify(html);
}

type HighlightCore = typeof import('highlight.js/lib/core').default;
type LanguageModule = { default: import('highlight.js').LanguageFn };

/** The languages offered, each its own chunk, by name and alias. */
const LANGUAGES: Record<string, () => Promise<LanguageModule>> = {
  javascript: () => import('highlight.js/lib/languages/javascript'),
  typescript: () => import('highlight.js/lib/languages/typescript'),
  python: () => import('highlight.js/lib/languages/python'),
  json: () => import('highlight.js/lib/languages/json'),
  bash: () => import('highlight.js/lib/languages/bash'),
  xml: () => import('highlight.js/lib/languages/xml'),
  css: () => import('highlight.js/lib/languages/css'),
  c: () => import('highlight.js/lib/languages/c'),
  cpp: () => import('highlight.js/lib/languages/cpp'),
  rust: () => import('highlight.js/lib/languages/rust'),
  go: () => import('highlight.js/lib/languages/go'),
  java: () => import('highlight.js/lib/languages/java'),
  sql: () => import('highlight.js/lib/languages/sql'),
  yaml: () => import('highlight.js/lib/languages/yaml'),
};
const ALIASES: Record<string, string> = {
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  ts: 'typescript',
  tsx: 'typescript',
  py: 'python',
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  console: 'bash',
  html: 'xml',
  svg: 'xml',
  rs: 'rust',
  yml: 'yaml',
  'c++': 'cpp',
  h: 'c',
  golang: 'go',
};

let core: Promise<HighlightCore> | null = null;
const registered = new Map<string, Promise<boolean>>();

/** highlight.js core (its own chunk, loaded on first use) with `name` registered; false for unknown languages. */
async function highlighterFor(lang: string): Promise<{ hljs: HighlightCore; name: string } | null> {
  const name = ALIASES[lang.toLowerCase()] ?? lang.toLowerCase();
  const load = LANGUAGES[name];
  if (!load) return null;
  core ??= import('highlight.js/lib/core').then((m) => {
    m.default.configure({ ignoreUnescapedHTML: true });
    return m.default;
  });
  const hljs = await core;
  if (!registered.has(name))
    registered.set(
      name,
      load().then((m) => (hljs.registerLanguage(name, m.default), true)),
    );
  return (await registered.get(name)) ? { hljs, name } : null;
}

/**
 * Colours the code blocks under `root` that name a known language (highlight.js escapes the code itself; it works on
 * the text of the element, never on HTML from the model). Resolves when done; failures leave the code plain.
 */
export async function highlightCode(root: HTMLElement): Promise<void> {
  const blocks = Array.from(root.querySelectorAll<HTMLElement>('pre > code[class*="language-"]')).filter(
    (c) => !c.dataset.highlighted,
  );
  for (const code of blocks) {
    const lang = /language-([\w+#.-]+)/.exec(code.className)?.[1];
    if (!lang) continue;
    try {
      const h = await highlighterFor(lang);
      if (!h || !code.isConnected) continue;
      code.innerHTML = h.hljs.highlight(code.textContent ?? '', { language: h.name, ignoreIllegals: true }).value;
      code.dataset.highlighted = 'yes';
    } catch (e) {
      console.warn('webgguf demo: syntax highlighting unavailable', e);
      return;
    }
  }
}
