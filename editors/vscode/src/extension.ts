// The extension's entry point: finds the binary, starts the client, registers the
// commands and the profile status bar item. Everything here is wiring; the logic it
// calls lives in the pure modules (commands, profile, binary, restart, render).

import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { resolveBinary, resolveWithGrace } from './binary';
import { createClient } from './client';
import {
  Commands,
  Cursor,
  entryArgument,
  executeCommandParams,
  failureMessage,
  fileName,
  sendAllArguments,
  sendArguments,
  ServerCommands,
} from './commands';
import { STREAM_NOTIFICATION } from './live';
import { History, HistoryEntry, historyLabel, sentText } from './history';
import { ProgressCommands } from './progresscommands';
import type { CurlResult, Outcome, SendAllResult } from './outcome';
import { ResponsePanel } from './panel';
import {
  normalizeProfile,
  PROFILE_STATE_KEY,
  statusText,
} from './profile';
import { PROMPT_REQUEST, type PromptParams, answerPrompt } from './prompt';
import { serverOption } from './remote';
import { RestartPolicy } from './restart';
import { RESPONSE_MODES, responseMode } from './bodyview';
import { HistoryView } from './historyview';
import { openFullBody, openInEditor, saveBody as saveResponseBody } from './responseactions';
import { importFile } from './importcommand';
import { chooseProfile } from './profilecommand';
import { generateSnippet } from './snippetcommand';
import { TestingView } from './testing';

let extension: Extension | undefined;

export function activate(context: vscode.ExtensionContext): void {
  extension = new Extension(context);
  context.subscriptions.push(extension);
  void extension.start();
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
}

/** How long a missing binary is looked for again before it is reported, and how often. */
const SETTINGS_GRACE_MS = 5_000;
const SETTINGS_POLL_MS = 250;

class Extension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private readonly output = vscode.window.createOutputChannel('Volley');
  private readonly panel = new ResponsePanel();
  /** The jq filter typed last, offered again. */
  private lastFilter = '.';
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private readonly restartPolicy = new RestartPolicy();
  /** Every response of the session, for the panel's actions and the history. */
  private readonly history = new History();
  private readonly progress = new ProgressCommands(
    () => this.start(),
    (error) => this.showFailure(error),
  );
  /** The language server's stored responses. */
  private readonly historyView = new HistoryView({
    call: (command, argument) => this.call(command, argument),
    showFailure: (error) => this.showFailure(error),
    showSessionHistory: () => this.showSessionHistory(),
    target: (argument) => this.requestTarget(argument),
  });

  constructor(private readonly context: vscode.ExtensionContext) {
    context.subscriptions.push(
      this.output,
      this.panel,
      this.status,
      vscode.commands.registerCommand(Commands.sendRequest, (argument?: unknown) => this.sendRequest(argument)),
      vscode.commands.registerCommand(Commands.sendAll, (argument?: unknown) => this.sendAll(argument)),
      vscode.commands.registerCommand(Commands.selectProfile, () => this.selectProfile()),
      vscode.commands.registerCommand(Commands.showLastResponse, () => this.showLastResponse()),
      vscode.commands.registerCommand(Commands.restartServer, () => this.restart()),
      vscode.commands.registerCommand(Commands.rerun, (argument?: unknown) => this.rerun(argument)),
      vscode.commands.registerCommand(Commands.saveBody, (argument?: unknown) => this.saveBody(argument)),
      vscode.commands.registerCommand(Commands.filterBody, (argument?: unknown) => this.filterBody(argument)),
      vscode.commands.registerCommand(Commands.copyAsCurl, (argument?: unknown) => this.copyAsCurl(argument)),
      vscode.commands.registerCommand(Commands.showSent, (argument?: unknown) => this.showSent(argument)),
      vscode.commands.registerCommand(Commands.showHistory, () => this.showHistory()),
      vscode.commands.registerCommand(Commands.clearCookies, () => this.clearCookies()),
      vscode.commands.registerCommand(Commands.importFile, () =>
        importFile(this.output, (command, argument) => this.tryCall(command, argument)),
      ),
      ...this.responseCommands(),
      new TestingView({
        client: () => this.start(),
        send: (target, cancellation) => this.sendRequest(target, cancellation),
        log: (line) => this.output.appendLine(line),
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateStatus()),
      vscode.workspace.onDidChangeConfiguration((event) => {
        // The server reads these when it starts: a restart applies them.
        if (event.affectsConfiguration('volley.path') || event.affectsConfiguration('volley.server')) {
          void this.restart();
        }
      }),
    );
    this.status.command = Commands.selectProfile;
    this.status.tooltip = 'Volley configuration profile (click to choose)';
    this.updateStatus();
  }

  /** The binary `volley.path` (or PATH) names, as the settings are now. */
  private resolveBinary(): ReturnType<typeof resolveBinary> {
    return resolveBinary(
      vscode.workspace.getConfiguration('volley').get<string>('path'),
      { path: process.env.PATH, platform: process.platform, pathExt: process.env.PATHEXT, home: os.homedir() },
      { isExecutable },
    );
  }

  /** Starts the server; undefined (after telling the user) when the binary is missing. */
  start(): Promise<LanguageClient | undefined> {
    if (!this.starting) {
      this.starting = this.startClient();
    }
    return this.starting;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.starting = undefined;
    if (client) {
      await client.stop().catch((error: unknown) => this.output.appendLine(`stopping the server failed: ${String(error)}`));
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    this.restartPolicy.reset();
    await this.start();
  }

  dispose(): void {
    void this.stop();
  }

  private async startClient(): Promise<LanguageClient | undefined> {
    // The settings are read again for a few seconds before the binary is called missing
    // (they can come late after a window reload: `resolveWithGrace`).
    const resolution = await resolveWithGrace(() => this.resolveBinary(), SETTINGS_GRACE_MS, SETTINGS_POLL_MS);
    if (!resolution.found) {
      this.output.appendLine(resolution.message);
      void vscode.window.showErrorMessage(resolution.message, 'Open Settings').then((choice) => {
        if (choice === 'Open Settings') {
          void vscode.commands.executeCommand('workbench.action.openSettings', 'volley.path');
        }
      });
      this.starting = undefined;
      return undefined;
    }
    this.output.appendLine(`starting ${resolution.path} lsp`);
    const client = createClient({
      binary: resolution.path,
      output: this.output,
      profile: () => this.profile(),
      server: () => {
        const settings = vscode.workspace.getConfiguration('volley.server');
        return serverOption(settings.get('url'), settings.get('token'));
      },
      restartPolicy: this.restartPolicy,
    });
    try {
      await client.start();
    } catch (error) {
      const message = `Volley: the language server did not start: ${error instanceof Error ? error.message : String(error)}`;
      this.output.appendLine(message);
      void vscode.window.showErrorMessage(message, 'Show Log').then((choice) => {
        if (choice === 'Show Log') {
          this.output.show();
        }
      });
      this.starting = undefined;
      return undefined;
    }
    client.onRequest(PROMPT_REQUEST, (params: PromptParams) => answerPrompt(params, vscode.window));
    client.onNotification(STREAM_NOTIFICATION, (update: { live?: unknown }) => {
      const send = typeof update?.live === 'string' ? this.progress.live(update.live) : undefined;
      if (send?.apply(update)) {
        this.panel.showLive(send.view());
      }
    });
    this.client = client;
    return client;
  }

  /**
   * Sends a request and shows its response. With `cancellation` (a test run's), the run
   * owns the progress and the failures: see `ProgressCommands.execute`.
   */
  private async sendRequest(argument: unknown, cancellation?: vscode.CancellationToken): Promise<Outcome | undefined> {
    const picked = sendArguments(argument, this.cursor());
    if (!picked) {
      void vscode.window.showInformationMessage('Volley: put the cursor in a request of a .http file to send it.');
      return undefined;
    }
    const outcome = await this.progress.execute<Outcome>(
      ServerCommands.send,
      picked,
      'Sending request',
      'Response: listening',
      cancellation,
    );
    if (outcome?.error?.kind === 'cancelled') {
      if (!cancellation) {
        void vscode.window.showInformationMessage('Volley: cancelled.');
      }
    } else if (outcome) {
      for (const first of outcome.ranFirst ?? []) {
        this.history.add(first, { command: 'send', uri: picked.uri, index: first.request.index }, fileName(picked.uri));
      }
      const origin = { command: 'send' as const, uri: picked.uri, index: outcome.request.index };
      const entry = this.history.add(outcome, origin, fileName(picked.uri));
      if (this.panel.mode() === 'editor' && !cancellation && outcome.response) {
        await openInEditor(outcome);
      } else {
        this.panel.show({ kind: 'send', outcome, entry: entry.id });
      }
    }
    return outcome;
  }

  private async sendAll(argument: unknown): Promise<void> {
    const picked = sendAllArguments(argument, this.httpDocument()?.uri.toString());
    if (!picked) {
      void vscode.window.showInformationMessage('Volley: open a .http file to send its requests.');
      return;
    }
    const result = await this.progress.execute<SendAllResult>(
      ServerCommands.sendAll,
      picked,
      'Sending all requests',
      `Responses: ${fileName(picked.uri)}`,
    );
    if (result) {
      const file = fileName(picked.uri);
      const entries = result.results.map((outcome) => {
        const origin = { command: 'sendAll' as const, uri: picked.uri, index: outcome.request.index };
        return this.history.add(outcome, origin, file).id;
      });
      this.panel.show({ kind: 'sendAll', file, result, entries });
    }
  }

  /** The history entry a command is about: the one it names, else the one shown last. */
  private entry(argument: unknown): HistoryEntry | undefined {
    const id = entryArgument(argument) ?? this.panel.lastEntry();
    const entry = id === undefined ? undefined : this.history.get(id);
    if (!entry) {
      void vscode.window.showInformationMessage('Volley: no response to act on yet: send a request first.');
    }
    return entry;
  }

  /** Sends the request of a history entry again (by its index in its document). */
  private async rerun(argument: unknown): Promise<void> {
    const entry = this.entry(argument);
    if (entry) {
      await this.sendRequest({ uri: entry.origin.uri, index: entry.origin.index });
    }
  }

  /**
   * Writes a response's body to a file the user picks: the whole body's file copied when
   * the server cut the body, else the body as received (base64 decoded).
   */
  private async saveBody(argument: unknown): Promise<void> {
    const entry = this.entry(argument);
    if (entry) {
      await saveResponseBody(entry.outcome);
    }
  }

  /**
   * Shows a response's body through a jq filter the user types (offered again next
   * time); the language server runs it (`volley.filter`) and the panel shows the output
   * above the body.
   */
  private async filterBody(argument: unknown): Promise<void> {
    const entry = this.entry(argument);
    const response = entry?.outcome.response;
    if (!entry || !response) {
      if (entry) {
        void vscode.window.showInformationMessage('Volley: this request has no response to filter: it was not sent.');
      }
      return;
    }
    if (response.bodyEncoding !== 'text') {
      void vscode.window.showInformationMessage('Volley: this response body is binary: a jq filter reads JSON.');
      return;
    }
    const expression = await vscode.window.showInputBox({
      title: 'Filter the response body (jq)',
      prompt: 'A jq filter, such as .items[] | {id, name}',
      value: response.filtered?.expression ?? this.lastFilter,
    });
    if (expression === undefined) {
      return;
    }
    this.lastFilter = expression;
    const result = await this.tryCall<{ output?: string; error?: string }>(ServerCommands.filter, {
      body: response.body,
      expression,
    });
    if (result === undefined) {
      return;
    }
    response.filtered = { expression, ...result };
    this.panel.show({ kind: 'send', outcome: entry.outcome, entry: entry.id });
  }

  /** Copies a request as a curl command line: the cursor's request, or a history entry's. */
  private async copyAsCurl(argument: unknown): Promise<void> {
    let picked: unknown;
    if (entryArgument(argument) === undefined && this.cursor()) {
      picked = sendArguments(argument, this.cursor());
    } else {
      const entry = this.entry(argument);
      picked = entry ? { uri: entry.origin.uri, index: entry.origin.index } : undefined;
    }
    if (!picked) {
      return;
    }
    const result = await this.tryCall<CurlResult>(ServerCommands.copyAsCurl, picked);
    if (result === undefined) {
      return;
    }
    await vscode.env.clipboard.writeText(result.curl);
    const warnings = result.warnings ?? [];
    if (warnings.length > 0) {
      void vscode.window.showWarningMessage(`Volley: copied as cURL, but: ${warnings.join('; ')}`);
    } else {
      void vscode.window.showInformationMessage('Volley: copied the request as a cURL command.');
    }
  }

  /** Opens the request as it was sent (redacted) in an untitled editor beside the panel. */
  private async showSent(argument: unknown): Promise<void> {
    const entry = this.entry(argument);
    if (!entry) {
      return;
    }
    if (!entry.outcome.sent) {
      void vscode.window.showInformationMessage('Volley: this request was not sent, so there is nothing to show.');
      return;
    }
    const document = await vscode.workspace.openTextDocument({ language: 'http', content: sentText(entry.outcome.sent) });
    await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }

  /** The stored responses (the language server's history), newest first. */
  private async showHistory(): Promise<void> {
    await this.historyView.show();
  }

  /** The session's responses, newest first; the one picked is shown in the panel. */
  private async showSessionHistory(): Promise<void> {
    const entries = this.history.entries();
    if (entries.length === 0) {
      void vscode.window.showInformationMessage('Volley: no request was sent yet.');
      return;
    }
    const picked = await vscode.window.showQuickPick(
      entries.map((entry) => ({ ...historyLabel(entry), entry })),
      { title: 'Volley: responses of this session', matchOnDescription: true, matchOnDetail: true },
    );
    if (picked) {
      this.panel.show({ kind: 'send', outcome: picked.entry.outcome, entry: picked.entry.id });
    }
  }

  /** Empties the cookie jar of the active document's workspace (every jar without one). */
  private async clearCookies(): Promise<void> {
    const uri = this.httpDocument()?.uri.toString();
    const result = await this.tryCall<{ cleared?: number } | null>(
      ServerCommands.clearCookies,
      uri === undefined ? {} : { uri },
    );
    if (result === undefined) {
      return;
    }
    const cleared = result?.cleared ?? 0;
    void vscode.window.showInformationMessage(`Volley: cleared ${cleared} ${cleared === 1 ? 'cookie' : 'cookies'}.`);
  }

  private showLastResponse(): void {
    if (!this.panel.showLast()) {
      void vscode.window.showInformationMessage('Volley: no request was sent yet.');
    }
  }

  private async selectProfile(): Promise<void> {
    const document = this.httpDocument() ?? vscode.workspace.textDocuments.find((open) => open.languageId === 'http');
    const chosen = await chooseProfile(document, this.profile(), (command, argument) => this.tryCall(command, argument));
    if (chosen) {
      await this.context.workspaceState.update(PROFILE_STATE_KEY, chosen.profile);
      this.updateStatus();
    }
  }

  /**
   * The commands of the response views, the large bodies, the stored history, the code
   * snippets and cancelling (the issue 41 round).
   */
  private responseCommands(): vscode.Disposable[] {
    const withOutcome = (action: (outcome: Outcome) => Promise<void>) => async (argument?: unknown) => {
      const entry = this.entry(argument);
      if (entry) {
        await action(entry.outcome);
      }
    };
    return [
      vscode.commands.registerCommand(Commands.responseView, (argument?: unknown) => this.chooseView(argument)),
      vscode.commands.registerCommand(Commands.openBody, withOutcome(openFullBody)),
      vscode.commands.registerCommand(Commands.openInEditor, withOutcome(openInEditor)),
      vscode.commands.registerCommand(Commands.compareWithPrevious, (argument?: unknown) =>
        this.historyView.compareWithPrevious(argument),
      ),
      vscode.commands.registerCommand(Commands.compareHistory, () => this.historyView.compare()),
      vscode.commands.registerCommand(Commands.clearHistory, () => {
        const uri = this.httpDocument()?.uri.toString();
        return this.historyView.clear(uri, uri === undefined ? undefined : fileName(uri));
      }),
      vscode.commands.registerCommand(Commands.generateSnippet, (argument?: unknown) =>
        generateSnippet(
          sendArguments(argument, this.cursor()),
          (command, value) => this.call(command, value),
          (error) => this.showFailure(error),
        ),
      ),
      vscode.commands.registerCommand(Commands.cancel, () => {
        if (!this.progress.cancelAll()) {
          void vscode.window.showInformationMessage('Volley: no request is running.');
        }
      }),
    ];
  }

  /** Shows responses in the view `{view}` names (a panel link), else in the one picked. */
  private async chooseView(argument: unknown): Promise<void> {
    const named = (argument as { view?: unknown } | undefined)?.view;
    let mode = named === undefined ? undefined : responseMode(named);
    if (mode === undefined) {
      const current = this.panel.mode();
      const picked = await vscode.window.showQuickPick(
        RESPONSE_MODES.map((view) => ({
          label: view.title,
          description: view.mode === current ? `${view.description} (current)` : view.description,
          mode: view.mode,
        })),
        { title: 'Volley: show responses as' },
      );
      mode = picked?.mode;
    }
    if (mode === undefined) {
      return;
    }
    this.panel.choose(mode);
    const last = this.panel.lastView();
    if (mode === 'editor' && last?.kind === 'send') {
      await openInEditor(last.outcome);
    }
  }

  /** The request "compare with previous" is about: the link's, the cursor's, else the one shown last. */
  private requestTarget(argument: unknown): { uri: string; index: number } | { uri: string; line: number } | undefined {
    const named = entryArgument(argument);
    const cursor = named === undefined ? this.cursor() : undefined;
    if (cursor) {
      return { uri: cursor.uri, line: cursor.line };
    }
    const id = named ?? this.panel.lastEntry();
    const entry = id === undefined ? undefined : this.history.get(id);
    return entry ? { uri: entry.origin.uri, index: entry.origin.index } : undefined;
  }

  /** Runs a server command and answers its result; throws its error. */
  private async call<T>(command: string, argument: unknown): Promise<T> {
    const client = await this.start();
    if (!client) {
      throw new Error('the language server is not running');
    }
    return (await client.sendRequest(ExecuteCommandRequest.type, executeCommandParams(command, argument))) as T;
  }

  /**
   * Runs a server command and answers its result: `undefined` when the server is not
   * running or the command failed (the failure shown).
   */
  private async tryCall<T>(command: string, argument: unknown): Promise<T | undefined> {
    if (!(await this.start())) {
      return undefined;
    }
    try {
      return await this.call<T>(command, argument);
    } catch (error) {
      this.showFailure(error);
      return undefined;
    }
  }

  private showFailure(error: unknown): void {
    const message = failureMessage(error);
    if (message === undefined) {
      void vscode.window.showInformationMessage('Volley: cancelled.');
    } else {
      void vscode.window.showErrorMessage(message);
    }
  }

  private profile(): string | undefined {
    return normalizeProfile(this.context.workspaceState.get<string>(PROFILE_STATE_KEY));
  }

  private httpDocument(): vscode.TextDocument | undefined {
    const document = vscode.window.activeTextEditor?.document;
    return document?.languageId === 'http' ? document : undefined;
  }

  private cursor(): Cursor | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'http') {
      return undefined;
    }
    return { uri: editor.document.uri.toString(), line: editor.selection.active.line };
  }

  private updateStatus(): void {
    this.status.text = statusText(this.profile());
    if (this.httpDocument()) {
      this.status.show();
    } else {
      this.status.hide();
    }
  }
}

function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    fs.accessSync(file, process.platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
