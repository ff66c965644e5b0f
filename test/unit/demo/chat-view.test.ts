// @vitest-environment jsdom
/**
 * The demo's message list: `<think>` reasoning becomes a collapsible block (also when the template opened it), finish
 * notes come from the stored message (so they survive reloads and re-renders), and the list is never a live region —
 * only a finished answer is announced, once, through the separate status element.
 */
import { describe, expect, it } from 'vitest';
import { ChatView, finishNote, splitThinking } from '../../../demo/ui/chat-view';

describe('splitThinking', () => {
  it('splits a closed, an open (streaming) and a template-opened thinking block', () => {
    expect(splitThinking('<think>plan</think>\n\nAnswer')).toEqual({ thinking: 'plan', answer: 'Answer', open: false });
    expect(splitThinking('<think>still thinking')).toEqual({ thinking: 'still thinking', answer: '', open: true });
    expect(splitThinking('plan first</think>Answer')).toEqual({
      thinking: 'plan first',
      answer: 'Answer',
      open: false,
    });
    expect(splitThinking('No thinking here')).toEqual({ thinking: null, answer: 'No thinking here', open: false });
  });
});

describe('ChatView', () => {
  it('draws finish notes from the messages and announces only finished answers', () => {
    const list = document.createElement('ol');
    const status = document.createElement('div');
    const view = new ChatView(list, status, { edit: () => undefined, regenerate: () => undefined });
    view.render([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'cut sho', finish: 'aborted' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: '<think>hmm</think>long answer', finish: 'length' },
    ]);
    expect(Array.from(list.querySelectorAll('.note'), (n) => n.textContent)).toEqual([
      '— stopped',
      '— reached the token limit',
    ]);
    expect(list.querySelector('details.thinking summary')?.textContent).toBe('Thought process');
    expect(list.getAttribute('aria-live')).toBeNull();
    expect(status.textContent).toBe('');
    const answer = { role: 'assistant' as const, content: '' };
    const li = view.append(answer, 4);
    answer.content = 'Streaming text';
    view.update(li, answer.content);
    expect(status.textContent).toBe('');
    view.finish(li, { ...answer, finish: 'stop' });
    expect(status.textContent).toBe('Answer: Streaming text');
    expect(finishNote('stop')).toBe('');
  });

  it("shows a user message's stored image as a thumbnail, and only a data:image URL", () => {
    const list = document.createElement('ol');
    const view = new ChatView(list, document.createElement('div'), {
      edit: () => undefined,
      regenerate: () => undefined,
    });
    const jpeg = 'data:image/jpeg;base64,/9j/AA==';
    view.render([
      { role: 'user', content: 'what is this?', image: jpeg },
      { role: 'assistant', content: 'a cat' },
      { role: 'user', content: 'and this?', image: 'javascript:alert(1)' },
    ]);
    const thumbs = list.querySelectorAll<HTMLImageElement>('img.thumb');
    expect(thumbs).toHaveLength(1);
    expect(thumbs[0].getAttribute('src')).toBe(jpeg);
    expect(thumbs[0].closest('li')?.dataset.index).toBe('0');
    expect(thumbs[0].alt).toBe('Attached image');
  });
});
