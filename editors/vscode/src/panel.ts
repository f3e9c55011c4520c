// The response panel: one webview beside the editor, reused for every send. While a
// streaming send is listening, the panel shows its items live (redrawn at most every
// `LIVE_REDRAW_MS`); the command's answer then replaces them. The page has no scripts:
// its action links are `command:` links to the extension's panel commands only.

import { randomBytes } from 'crypto';
import * as vscode from 'vscode';
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
        { enableScripts: false, enableCommandUris: PANEL_COMMANDS, enableFindWidget: true, localResourceRoots: [] },
      );
      this.panel.onDidDispose(() => {
        this.panel = undefined;
      });
    }
    this.panel.title = pageTitle(view);
    this.panel.webview.html = renderPage(view, randomBytes(16).toString('hex'));
  }
}
