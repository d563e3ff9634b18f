// RunStream's greeting (the run page's `join`, and its view while sharing) is sent on every
// connection, reconnections too; presence and view messages reach their handlers; send()
// while disconnected reports false instead of throwing.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunStream, type ClientMessage, type PresenceMessage, type SocketLike, type ViewMessage } from '../runStream';

class RecordingSocket implements SocketLike {
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  sent: unknown[] = [];
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close() {}
  receive(message: object) {
    this.onmessage?.({ data: JSON.stringify(message) } as MessageEvent);
  }
}

describe('RunStream greeting', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('greets on every connection and hands presence and view messages over', () => {
    const sockets: RecordingSocket[] = [];
    let sharing = false;
    const greeting = (): ClientMessage[] => (sharing ? [{ type: 'join' }, { type: 'share_view', sharing: true, tick: 1, node: 'big' }] : [{ type: 'join' }]);
    const presence: PresenceMessage[] = [];
    const views: ViewMessage[] = [];
    const stream = new RunStream('ws://x/ws/runs/1/', { onPresence: (m) => presence.push(m), onView: (m) => views.push(m) }, {
      createSocket: () => {
        sockets.push(new RecordingSocket());
        return sockets[sockets.length - 1]!;
      },
      backoff: () => 10,
      greeting,
    });
    expect(stream.send({ type: 'join' })).toBe(false); // not connected yet
    stream.start();
    sockets[0]!.onopen?.(new Event('open'));
    expect(sockets[0]!.sent).toEqual([{ type: 'join' }]);
    sockets[0]!.receive({ type: 'presence', you: 'a', watchers: [] });
    sockets[0]!.receive({ type: 'view', from: 'b', name: 'bob', tick: 0, node: null });
    expect(presence).toHaveLength(1);
    expect(views[0]!.name).toBe('bob');
    // Sharing, then the connection drops: the next one joins and says the view again.
    sharing = true;
    sockets[0]!.onclose?.({ code: 1006, reason: '' } as CloseEvent);
    vi.advanceTimersByTime(10);
    sockets[1]!.onopen?.(new Event('open'));
    expect(sockets[1]!.sent).toEqual([{ type: 'join' }, { type: 'share_view', sharing: true, tick: 1, node: 'big' }]);
    expect(stream.send({ type: 'share_view', sharing: false })).toBe(true);
    stream.close();
  });
});
