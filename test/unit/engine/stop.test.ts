/** StopMatcher: stop strings across token boundaries are never emitted; held text is released when ruled out. */
import { describe, expect, it } from 'vitest';
import { StopMatcher } from '../../../src/engine/stop.js';

function feed(stops: string[], pieces: string[]): { out: string; stopped: boolean; stop?: string } {
  const m = new StopMatcher(stops);
  let out = '';
  for (const p of pieces) {
    const r = m.push(p);
    out += r.text;
    if (r.stopped) return { out, stopped: true, stop: r.stop };
  }
  return { out: out + m.flush(), stopped: false };
}

describe('StopMatcher', () => {
  const cases: { name: string; stops: string[]; pieces: string[]; out: string; stopped: boolean }[] = [
    { name: 'no stops passes through', stops: [], pieces: ['a', 'b'], out: 'ab', stopped: false },
    { name: 'stop inside one piece', stops: ['END'], pieces: ['abcENDxyz'], out: 'abc', stopped: true },
    { name: 'stop across three pieces', stops: ['END'], pieces: ['ab', 'E', 'N', 'Dzz'], out: 'ab', stopped: true },
    { name: 'false start is released', stops: ['END'], pieces: ['ab', 'EN', 'x'], out: 'abENx', stopped: false },
    { name: 'held prefix released at the end', stops: ['END'], pieces: ['ab', 'EN'], out: 'abEN', stopped: false },
    {
      name: 'earliest of several stops',
      stops: ['\n\n', 'User:'],
      pieces: ['hi User', ':\n\n'],
      out: 'hi ',
      stopped: true,
    },
    { name: 'overlapping prefix', stops: ['aab'], pieces: ['a', 'a', 'a', 'b'], out: 'a', stopped: true },
    { name: 'multi-byte characters', stops: ['ü!'], pieces: ['grüß', 'ü', '!'], out: 'grüß', stopped: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = feed(c.stops, c.pieces);
      expect(r.out).toBe(c.out);
      expect(r.stopped).toBe(c.stopped);
    });
  }
  it('emits nothing after a stop', () => {
    const m = new StopMatcher(['x']);
    expect(m.push('ax').stopped).toBe(true);
    expect(m.push('more')).toEqual({ text: '', stopped: true });
    expect(m.flush()).toBe('');
  });
});
