// Posting the large bodies of the panel's page to its viewer (`webview/bodyviewer.ts`):
// when the page says `ready` (each time it loads: a panel hidden and shown again reloads
// it), each body the page has goes out in slices of `SLICE_CHARS`, one message after the
// other, so that no one message makes the window wait. A newer page or a newer `ready`
// stops the slices of the one before.

import type * as vscode from 'vscode';
import type { ViewerBody } from './bodyview';

/** The characters of one message: a few milliseconds to send, receive and index. */
export const SLICE_CHARS = 256 * 1024;

/** What the page says when it has loaded: its session and the bodies it has boxes for. */
interface ReadyMessage {
  type: 'ready';
  session: string;
  bodies: string[];
}

export class BodyFeed implements vscode.Disposable {
  private bodies = new Map<string, ViewerBody>();
  /** Counts the pages and the `ready`s: a loop that sees another number stops. */
  private turn = 0;
  private readonly listener: vscode.Disposable;

  constructor(private readonly webview: vscode.Webview) {
    this.listener = webview.onDidReceiveMessage((message: unknown) => {
      if (isReady(message)) {
        void this.send(message);
      }
    });
  }

  /** The bodies of the page just set; the slices of the page before stop. */
  load(bodies: ViewerBody[]): void {
    this.turn += 1;
    this.bodies = new Map(bodies.map((body) => [body.id, body]));
  }

  dispose(): void {
    this.turn += 1;
    this.listener.dispose();
  }

  private async send(ready: ReadyMessage): Promise<void> {
    const turn = ++this.turn;
    for (const id of ready.bodies) {
      const body = this.bodies.get(id);
      if (!body) {
        continue;
      }
      for (let offset = 0; offset < body.text.length || offset === 0; offset += SLICE_CHARS) {
        if (turn !== this.turn) {
          return;
        }
        const chunk = body.text.slice(offset, offset + SLICE_CHARS);
        const done = offset + SLICE_CHARS >= body.text.length;
        const delivered = await this.webview.postMessage({ type: 'body', session: ready.session, id, offset, chunk, done });
        if (!delivered) {
          return;
        }
      }
    }
  }
}

function isReady(message: unknown): message is ReadyMessage {
  const ready = message as Partial<ReadyMessage> | null;
  return (
    typeof ready === 'object' &&
    ready !== null &&
    ready.type === 'ready' &&
    typeof ready.session === 'string' &&
    Array.isArray(ready.bodies)
  );
}
