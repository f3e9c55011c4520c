// Live streaming: the `volley/stream` notifications the server sends while it listens to
// an event stream or a WebSocket, and a gRPC call's response messages (docs/lsp.md,
// "live"), gathered into what the panel
// shows until the command answers. Pure: no `vscode` import.

import type { StreamItem } from './outcome';

/** The method of the server's notification. */
export const STREAM_NOTIFICATION = 'volley/stream';

/** The most items kept per stream while listening; older ones are dropped (and counted). */
export const LIVE_ITEM_CAP = 1000;

/** What is listened to: an event stream, a WebSocket, a gRPC call's response messages. */
export type LiveKind = 'sse' | 'websocket' | 'grpc';

/** One `volley/stream` notification. */
export interface StreamUpdate {
  live: string;
  requestIndex: number;
  kind: LiveKind;
  /** On the opening notification. */
  status?: number;
  /** On every later one. */
  item?: StreamItem;
}

/** One response being listened to. */
export interface LiveStream {
  requestIndex: number;
  kind: LiveKind;
  status?: number;
  items: StreamItem[];
  /** Items dropped to keep at most `LIVE_ITEM_CAP`. */
  dropped: number;
}

/** What the panel shows while a send is listening. */
export interface LiveView {
  kind: 'live';
  title: string;
  /** In the order they opened. */
  streams: LiveStream[];
}

/** The streams of one send (one `live` id); other ids' updates are ignored. */
export class LiveSend {
  private readonly streams = new Map<number, LiveStream>();

  constructor(
    readonly id: string,
    private readonly title: string,
  ) {}

  /** Takes `update` in; false when it belongs to another send or is malformed. */
  apply(update: unknown): boolean {
    if (!isStreamUpdate(update) || update.live !== this.id) {
      return false;
    }
    let stream = this.streams.get(update.requestIndex);
    if (!stream) {
      stream = { requestIndex: update.requestIndex, kind: update.kind, items: [], dropped: 0 };
      this.streams.set(update.requestIndex, stream);
    }
    if (update.status !== undefined) {
      stream.status = update.status;
    }
    if (update.item) {
      stream.items.push(update.item);
      if (stream.items.length > LIVE_ITEM_CAP) {
        stream.items.shift();
        stream.dropped += 1;
      }
    }
    return true;
  }

  view(): LiveView {
    return { kind: 'live', title: this.title, streams: [...this.streams.values()] };
  }
}

function isStreamUpdate(value: unknown): value is StreamUpdate {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const update = value as Partial<StreamUpdate>;
  const item = update.item as Partial<StreamItem> | undefined;
  return (
    typeof update.live === 'string' &&
    typeof update.requestIndex === 'number' &&
    (update.kind === 'sse' || update.kind === 'websocket' || update.kind === 'grpc') &&
    (item === undefined || (typeof item.event === 'string' && typeof item.data === 'string'))
  );
}
