// The response history's commands: browse the language server's stored responses (a
// quick pick, newest first; the one picked opens as text), diff any two in VS Code's diff
// editor, "compare with previous" in one action after a send, and clear. The store is the
// server's (`storedhistory.ts`), so it survives a reload and holds `volley run --history`'s
// responses too. With a `volley` that has no history yet, Show History falls back to the
// session's list (`history.ts`).

import * as vscode from 'vscode';
import {
  diffOrder,
  diffTitle,
  HISTORY_PICK_LIMIT,
  type HistoryEntryFiles,
  type HistoryList,
  isUnknownCommand,
  previousPair,
  requestIndexAt,
  type StoredEntry,
  storedLabel,
} from './storedhistory';

/** The server's history commands (docs/lsp.md). */
export const HistoryServerCommands = {
  history: 'volley.history',
  entry: 'volley.historyEntry',
  clear: 'volley.historyClear',
  tests: 'volley.tests',
} as const;

/** Which request "compare with previous" is about. */
export type RequestTarget = { uri: string; index: number } | { uri: string; line: number };

/** What the history commands need from the extension. */
export interface HistoryHost {
  /** Runs a server command; throws its error. */
  call<T>(command: string, argument: unknown): Promise<T>;
  showFailure(error: unknown): void;
  /** The session's responses in a quick pick (the fallback without a server store). */
  showSessionHistory(): Promise<void>;
  /** The request a command is about: the panel link's, the cursor's, else the one shown last. */
  target(argument: unknown): RequestTarget | undefined;
}

type EntryItem = vscode.QuickPickItem & { entry: StoredEntry };

const COMPARE_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('diff'),
  tooltip: 'Compare with another response…',
};

export class HistoryView {
  constructor(private readonly host: HistoryHost) {}

  /** A quick pick of the stored responses; Enter opens one, its button compares it with another. */
  async show(): Promise<void> {
    const entries = await this.list({ limit: HISTORY_PICK_LIMIT }, true);
    if (!entries) {
      return;
    }
    if (entries.length === 0) {
      void vscode.window.showInformationMessage('Volley: no stored responses yet: send a request first.');
      return;
    }
    const pick = vscode.window.createQuickPick<EntryItem>();
    pick.title = 'Volley: response history (newest first)';
    pick.placeholder = 'Pick a response to open it; the diff button compares it with another';
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.items = entries.map((entry) => ({ ...storedLabel(entry), entry, buttons: [COMPARE_BUTTON] }));
    const chosen = await new Promise<{ entry: StoredEntry; compare: boolean } | undefined>((resolve) => {
      pick.onDidAccept(() => {
        const item = pick.selectedItems[0];
        resolve(item ? { entry: item.entry, compare: false } : undefined);
        pick.hide();
      });
      pick.onDidTriggerItemButton((event) => {
        resolve({ entry: event.item.entry, compare: true });
        pick.hide();
      });
      pick.onDidHide(() => resolve(undefined));
      pick.show();
    });
    pick.dispose();
    if (!chosen) {
      return;
    }
    if (!chosen.compare) {
      await this.open(chosen.entry);
      return;
    }
    const others = entries.filter((entry) => entry.id !== chosen.entry.id);
    const other = await vscode.window.showQuickPick(
      others.map((entry) => ({ ...storedLabel(entry), entry })),
      { title: `Compare ${storedLabel(chosen.entry).label} with…`, matchOnDescription: true, matchOnDetail: true },
    );
    if (other) {
      await this.diff(...diffOrder(chosen.entry, other.entry));
    }
  }

  /** Pick two stored responses, diff them (the older left). */
  async compare(): Promise<void> {
    const entries = await this.list({ limit: HISTORY_PICK_LIMIT }, false);
    if (!entries) {
      return;
    }
    if (entries.length < 2) {
      void vscode.window.showInformationMessage('Volley: fewer than two stored responses: nothing to compare yet.');
      return;
    }
    const picked = await vscode.window.showQuickPick(
      entries.map((entry) => ({ ...storedLabel(entry), entry })),
      { title: 'Volley: pick two responses to compare', canPickMany: true, matchOnDescription: true, matchOnDetail: true },
    );
    if (!picked) {
      return;
    }
    if (picked.length !== 2) {
      void vscode.window.showInformationMessage(`Volley: pick two responses to compare, not ${picked.length}.`);
      return;
    }
    await this.diff(...diffOrder(picked[0].entry, picked[1].entry));
  }

  /** Diffs the request's previous stored response (left) against its latest (right). */
  async compareWithPrevious(argument: unknown): Promise<void> {
    const target = this.host.target(argument);
    if (!target) {
      void vscode.window.showInformationMessage(
        'Volley: put the cursor in a request of a .http file, or send one, to compare its responses.',
      );
      return;
    }
    try {
      const index = 'index' in target ? target.index : await this.indexAt(target.uri, target.line);
      if (index === undefined) {
        void vscode.window.showInformationMessage('Volley: the cursor is not in a request.');
        return;
      }
      const list = await this.host.call<HistoryList>(HistoryServerCommands.history, { uri: target.uri, index, limit: 2 });
      const pair = previousPair(list);
      if (!pair) {
        void vscode.window.showInformationMessage(
          'Volley: this request has fewer than two stored responses: send it again to compare.',
        );
        return;
      }
      await this.diff(...pair);
    } catch (error) {
      this.host.showFailure(error);
    }
  }

  /** Clears the stored responses of the active file, or of the whole workspace. */
  async clear(activeUri: string | undefined, activeName: string | undefined): Promise<void> {
    const choices: (vscode.QuickPickItem & { uri?: string })[] = [];
    if (activeUri !== undefined) {
      choices.push({ label: `Responses of ${activeName ?? activeUri}`, uri: activeUri });
    }
    choices.push({ label: 'All stored responses', description: 'of every file of this project' });
    const picked = await vscode.window.showQuickPick(choices, { title: 'Volley: clear the response history' });
    if (!picked) {
      return;
    }
    try {
      const result = await this.host.call<{ cleared?: number } | null>(
        HistoryServerCommands.clear,
        picked.uri === undefined ? {} : { uri: picked.uri },
      );
      const cleared = result?.cleared ?? 0;
      void vscode.window.showInformationMessage(
        `Volley: cleared ${cleared} stored ${cleared === 1 ? 'response' : 'responses'}.`,
      );
    } catch (error) {
      this.host.showFailure(error);
    }
  }

  /** The stored entries; undefined after telling the user (or falling back to the session's list). */
  private async list(argument: object, fallBack: boolean): Promise<StoredEntry[] | undefined> {
    try {
      const list = await this.host.call<HistoryList>(HistoryServerCommands.history, argument);
      return list?.entries ?? [];
    } catch (error) {
      if (fallBack && isUnknownCommand(error)) {
        await this.host.showSessionHistory();
      } else {
        this.host.showFailure(error);
      }
      return undefined;
    }
  }

  private async open(entry: StoredEntry): Promise<void> {
    try {
      const files = await this.host.call<HistoryEntryFiles>(HistoryServerCommands.entry, { id: entry.id });
      await vscode.window.showTextDocument(vscode.Uri.file(files.path), { preview: true });
    } catch (error) {
      this.host.showFailure(error);
    }
  }

  private async diff(left: StoredEntry, right: StoredEntry): Promise<void> {
    try {
      const [leftFiles, rightFiles] = await Promise.all([
        this.host.call<HistoryEntryFiles>(HistoryServerCommands.entry, { id: left.id }),
        this.host.call<HistoryEntryFiles>(HistoryServerCommands.entry, { id: right.id }),
      ]);
      await vscode.commands.executeCommand(
        'vscode.diff',
        vscode.Uri.file(leftFiles.path),
        vscode.Uri.file(rightFiles.path),
        diffTitle(left, right),
        { preview: true },
      );
    } catch (error) {
      this.host.showFailure(error);
    }
  }

  /** The index of the request whose block holds `line`, from the server's `volley.tests`. */
  private async indexAt(uri: string, line: number): Promise<number | undefined> {
    const listed = await this.host.call<{ requests?: { index: number; line: number; endLine: number }[] }>(
      HistoryServerCommands.tests,
      { uri },
    );
    return requestIndexAt(listed?.requests ?? [], line);
  }
}
