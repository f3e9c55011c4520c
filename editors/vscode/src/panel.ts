// The response panel: one webview beside the editor, reused for every send. While a
// streaming send is listening, the panel shows its items live (redrawn at most every
// `LIVE_REDRAW_MS`); the command's answer then replaces them. The page's action links are
// `command:` links to the extension's panel commands only; its one script is the viewer of
// large bodies (`webview/bodyviewer.ts`, nonce'd, only when a body needs it), fed by
// `BodyFeed`. The view (full, headers, body, raw) is the `volley.response.view` setting
// until one is chosen in the panel.

import { randomBytes } from 'crypto';
import { readFileSync } from 'fs';
import { join } from 'path';
import * as vscode from 'vscode';
import { BodyFeed } from './bodyfeed';
import { type ResponseMode, responseMode, type ViewerBody } from './bodyview';
import type { LiveView } from './live';
import type { ResponseView } from './outcome';
import { PANEL_COMMANDS, pageTitle, renderPage } from './render';

/** How often a live view is redrawn at most. */
const LIVE_REDRAW_MS = 150;

export class ResponsePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private last: ResponseView | undefined;
  private pendingLive: LiveView | undefined;
  private redraw: NodeJS.Timeout | undefined;
  private feed: BodyFeed | undefined;
  /** The view chosen in the panel, for the session; else the setting's. */
  private chosenMode: ResponseMode | undefined;

  show(view: ResponseView): void {
    this.cancelLive();
    this.last = view;
    this.draw(view);
  }

  /** The history id of the response shown last (the last one of a Send All). */
  lastEntry(): number | undefined {
    const view = this.last;
    if (!view) {
      return undefined;
    }
    return view.kind === 'send' ? view.entry : view.entries?.[view.entries.length - 1];
  }

  /** Shows `view` of a send still listening, soon (redraws are batched). */
  showLive(view: LiveView): void {
    this.pendingLive = view;
    if (this.redraw) {
      return;
    }
    this.redraw = setTimeout(() => {
      this.redraw = undefined;
      const live = this.pendingLive;
      this.pendingLive = undefined;
      if (live) {
        this.draw(live);
      }
    }, LIVE_REDRAW_MS);
  }

  /** The view responses are shown in: the one chosen in the panel, else the setting's. */
  mode(): ResponseMode {
    return this.chosenMode ?? responseMode(vscode.workspace.getConfiguration('volley').get('response.view'));
  }

  /** Shows the panel's responses in `mode` from now on (this session), the last one again. */
  choose(mode: ResponseMode): void {
    this.chosenMode = mode;
    if (this.last && mode !== 'editor') {
      this.show(this.last);
    }
  }

  /** The response shown last. */
  lastView(): ResponseView | undefined {
    return this.last;
  }

  /** Shows the last response again; false when there is none. */
  showLast(): boolean {
    if (!this.last) {
      return false;
    }
    this.show(this.last);
    return true;
  }

  dispose(): void {
    this.cancelLive();
    this.feed?.dispose();
    this.panel?.dispose();
  }

  private cancelLive(): void {
    if (this.redraw) {
      clearTimeout(this.redraw);
      this.redraw = undefined;
    }
    this.pendingLive = undefined;
  }

  private draw(view: ResponseView | LiveView): void {
    if (this.panel) {
      this.panel.reveal(this.panel.viewColumn ?? vscode.ViewColumn.Beside, true);
    } else {
      this.panel = vscode.window.createWebviewPanel(
        'volley.response',
        pageTitle(view),
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: true, enableCommandUris: PANEL_COMMANDS, enableFindWidget: true, localResourceRoots: [] },
      );
      const feed = new BodyFeed(this.panel.webview);
      this.feed = feed;
      this.panel.onDidDispose(() => {
        feed.dispose();
        this.panel = undefined;
        this.feed = undefined;
      });
    }
    this.panel.title = pageTitle(view);
    const bodies: ViewerBody[] = [];
    const mode = this.mode();
    const script = viewerScript();
    this.panel.webview.html = renderPage(view, randomBytes(16).toString('hex'), {
      mode: mode === 'editor' ? 'full' : mode,
      // Without the viewer (a build without it), large bodies are cut in the page.
      bodies: script === undefined ? undefined : bodies,
      script,
    });
    this.feed?.load(bodies);
  }
}

let viewerBundle: string | undefined;

/** The viewer's bundle, next to the extension's (`dist/`), read once. */
function viewerScript(): string | undefined {
  if (viewerBundle === undefined) {
    try {
      viewerBundle = readFileSync(join(__dirname, 'bodyviewer.js'), 'utf8');
    } catch {
      viewerBundle = '';
    }
  }
  return viewerBundle === '' ? undefined : viewerBundle;
}
