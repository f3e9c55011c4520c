// The Testing view: a test controller whose items are the workspace's `.http` and `.rest`
// files, their requests and each request's checks (`# @assert` lines and the
// `client.test` calls of in-place handlers), as the language server's `volley.tests`
// lists them (no second parser here). Files are found with `workspace.findFiles`
// (bounded); a file's requests are asked for only when it is expanded, run or open, and
// asked again when it changes. Running sends each request through the extension's own
// send path (the panel shows the responses as for any send); `testreport.ts` turns the
// outcomes into results.

import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';
import {
  excludeGlob,
  extraPrefix,
  inExcludedFolder,
  isTestFile,
  MAX_TEST_FILES,
  type RequestNode,
  runOrder,
  TEST_FILES_GLOB,
  testTree,
} from './checks';
import { executeCommandParams, failureMessage, ServerCommands } from './commands';
import type { Outcome } from './outcome';
import { enqueue, lineRange, reportOutcome, skip, testMessage } from './testreport';

/** How long an open document rests after an edit before its requests are asked for again. */
const CHANGE_DEBOUNCE_MS = 300;

/** What the Testing view needs from the extension. */
export interface TestingHost {
  /** The language client, started if it is not; undefined when it cannot start. */
  client(): Promise<LanguageClient | undefined>;
  /**
   * Sends one request as Send Request does (the panel shows it); `token` cancels it.
   * Throws when the server answers with an error.
   */
  send(target: { uri: string; index: number }, token: vscode.CancellationToken): Promise<Outcome | undefined>;
  log(line: string): void;
}

export class TestingView implements vscode.Disposable {
  private readonly controller = vscode.tests.createTestController('volley', 'Volley');
  private readonly disposables: vscode.Disposable[] = [this.controller];
  /** The request each request item stands for, as of the last answer. */
  private readonly requests = new WeakMap<vscode.TestItem, RequestNode>();
  /** Files whose requests were asked for: the ones kept up to date. */
  private readonly resolved = new Set<string>();
  /** Per file, the number of the latest `volley.tests` asked: older answers are dropped. */
  private readonly generations = new Map<string, number>();
  /** Per file, the change waiting for its debounce. */
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private discovery: Promise<vscode.Uri[]> | undefined;

  constructor(private readonly host: TestingHost) {
    this.controller.resolveHandler = async (item) => {
      await (item ? this.resolve(item) : this.discover());
    };
    this.controller.refreshHandler = () => this.refresh();
    this.controller.createRunProfile('Run', vscode.TestRunProfileKind.Run, (request, token) => this.run(request, token), true);
    const files = vscode.workspace.createFileSystemWatcher(TEST_FILES_GLOB, false, false, true);
    // Any deletion: a folder's takes its files along without an event for each.
    const deletions = vscode.workspace.createFileSystemWatcher('**/*', true, true, false);
    this.disposables.push(
      files,
      deletions,
      files.onDidCreate((uri) => this.created(uri)),
      files.onDidChange((uri) => {
        // An open document is followed by its edits.
        if (!vscode.workspace.textDocuments.some((document) => document.uri.toString() === uri.toString())) {
          this.changed(uri);
        }
      }),
      deletions.onDidDelete((uri) => this.deleted(uri)),
      vscode.workspace.onDidOpenTextDocument((document) => this.opened(document)),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (isTestDocument(event.document) && event.contentChanges.length > 0) {
          this.changed(event.document.uri);
        }
      }),
      // Closed without saving: the file on disk is what counts again.
      vscode.workspace.onDidCloseTextDocument((document) => {
        if (isTestDocument(document) && this.resolved.has(document.uri.toString())) {
          this.changed(document.uri);
        }
      }),
    );
    for (const document of vscode.workspace.textDocuments) {
      this.opened(document);
    }
  }

  dispose(): void {
    for (const timer of this.pending.values()) {
      clearTimeout(timer);
    }
    this.pending.clear();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  /** Lists the workspace's files (at most `MAX_TEST_FILES`), their requests not yet; answers them. */
  private discover(): Promise<vscode.Uri[]> {
    this.discovery ??= (async () => {
      const exclude = excludeGlob(vscode.workspace.getConfiguration('files').get<Record<string, unknown>>('exclude'));
      const found = await vscode.workspace.findFiles(TEST_FILES_GLOB, exclude, MAX_TEST_FILES);
      if (found.length >= MAX_TEST_FILES) {
        this.host.log(`tests: the Testing view lists the first ${MAX_TEST_FILES} .http and .rest files of the workspace`);
      }
      for (const uri of found) {
        this.fileItem(uri);
      }
      return found;
    })().finally(() => {
      this.discovery = undefined;
    });
    return this.discovery;
  }

  /**
   * The refresh button: files found again (those no longer found and not open go, when
   * the list is not cut at its bound), the ones already expanded asked for again.
   */
  private async refresh(): Promise<void> {
    const found = await this.discover();
    if (found.length < MAX_TEST_FILES) {
      const kept = new Set([
        ...found.map((uri) => uri.toString()),
        ...vscode.workspace.textDocuments.map((document) => document.uri.toString()),
      ]);
      const gone: string[] = [];
      this.controller.items.forEach((item) => {
        if (!kept.has(item.id)) {
          gone.push(item.id);
        }
      });
      for (const id of gone) {
        this.forget(id);
      }
    }
    await Promise.all([...this.resolved].map((uri) => this.resolve(this.controller.items.get(uri))));
  }

  /** The item of a file, made when missing (unless the view holds `MAX_TEST_FILES` already). */
  private fileItem(uri: vscode.Uri): vscode.TestItem | undefined {
    const id = uri.toString();
    let item = this.controller.items.get(id);
    if (!item && this.controller.items.size < MAX_TEST_FILES) {
      item = this.controller.createTestItem(id, vscode.workspace.asRelativePath(uri), uri);
      item.canResolveChildren = true;
      this.controller.items.add(item);
    }
    return item;
  }

  private opened(document: vscode.TextDocument): void {
    if (isTestDocument(document) && !this.resolved.has(document.uri.toString())) {
      void this.resolve(this.fileItem(document.uri));
    }
  }

  private created(uri: vscode.Uri): void {
    if (!inExcludedFolder(uri.path)) {
      this.fileItem(uri);
    }
  }

  /** A file changed: asked for again once it rests, when its requests are shown. */
  private changed(uri: vscode.Uri): void {
    const id = uri.toString();
    if (!this.resolved.has(id) && !vscode.workspace.textDocuments.some((document) => document.uri.toString() === id)) {
      return;
    }
    clearTimeout(this.pending.get(id));
    this.pending.set(
      id,
      setTimeout(() => {
        this.pending.delete(id);
        void this.resolve(this.fileItem(uri));
      }, CHANGE_DEBOUNCE_MS),
    );
  }

  private deleted(uri: vscode.Uri): void {
    const gone = uri.toString();
    const items: vscode.TestItem[] = [];
    this.controller.items.forEach((item) => items.push(item));
    for (const item of items) {
      if (item.id === gone || item.id.startsWith(`${gone}/`)) {
        this.forget(item.id);
      }
    }
  }

  private forget(id: string): void {
    this.controller.items.delete(id);
    this.resolved.delete(id);
    this.generations.delete(id);
    clearTimeout(this.pending.get(id));
    this.pending.delete(id);
  }

  /** Asks the server for the requests of a file item and puts them under it. */
  private async resolve(item: vscode.TestItem | undefined): Promise<void> {
    if (!item?.uri || item.parent) {
      return;
    }
    const id = item.id;
    const generation = (this.generations.get(id) ?? 0) + 1;
    this.generations.set(id, generation);
    this.resolved.add(id);
    const client = await this.host.client();
    if (!client) {
      item.error = 'The Volley language server is not running.';
      return;
    }
    let answer: unknown;
    try {
      answer = await client.sendRequest(
        ExecuteCommandRequest.type,
        executeCommandParams(ServerCommands.tests, { uri: id }),
      );
    } catch (error) {
      if (this.generations.get(id) !== generation) {
        return;
      }
      const exists = await vscode.workspace.fs.stat(item.uri).then(
        () => true,
        () => false,
      );
      if (exists) {
        item.error = failureMessage(error) ?? 'cancelled';
      } else {
        this.forget(id);
      }
      return;
    }
    if (this.generations.get(id) === generation && this.controller.items.get(id) === item) {
      item.error = undefined;
      this.show(item, testTree(id, answer));
    }
  }

  /** Puts `nodes` under a file item, keeping the items (and so the results) of the same ids. */
  private show(file: vscode.TestItem, nodes: RequestNode[]): void {
    const uri = file.uri!;
    file.children.replace(
      nodes.map((node) => {
        const item = file.children.get(node.id) ?? this.controller.createTestItem(node.id, node.label, uri);
        item.label = node.label;
        item.description = node.description;
        item.range = new vscode.Range(node.line, 0, node.endLine, 0);
        this.requests.set(item, node);
        const checks = node.checks.map((check) => {
          const child = item.children.get(check.id) ?? this.controller.createTestItem(check.id, check.label, uri);
          child.description = check.kind === 'assert' ? 'assert' : 'test';
          child.range = lineRange(check.line);
          return child;
        });
        // Results not listed (a script file's tests) stay until the next run replaces them.
        const extra: vscode.TestItem[] = [];
        item.children.forEach((child) => {
          if (child.id.startsWith(extraPrefix(node.id))) {
            extra.push(child);
          }
        });
        item.children.replace([...checks, ...extra]);
        return item;
      }),
    );
  }

  private async run(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    const run = this.controller.createTestRun(request);
    const excluded = new Set(request.exclude ?? []);
    const included = request.include ? new Set(request.include) : undefined;
    /** Whether a run may report on `item`: inside what was picked, outside what was left out. */
    const inside = (item: vscode.TestItem): boolean => {
      let within = included === undefined;
      for (let at: vscode.TestItem | undefined = item; at; at = at.parent) {
        if (excluded.has(at)) {
          return false;
        }
        within ||= included?.has(at) ?? false;
      }
      return within;
    };
    try {
      const picked: vscode.TestItem[] = [];
      if (request.include) {
        picked.push(...request.include);
      } else {
        await this.discover();
        this.controller.items.forEach((item) => picked.push(item));
      }
      const targets: { uri: string; index: number; item: vscode.TestItem }[] = [];
      for (const item of picked) {
        if (excluded.has(item)) {
          continue;
        }
        for (const requestItem of await this.requestItems(item)) {
          const node = this.requests.get(requestItem);
          if (node && !excluded.has(requestItem)) {
            targets.push({ uri: requestItem.uri!.toString(), index: node.index, item: requestItem });
          }
        }
      }
      const ordered = runOrder(targets);
      for (const { item } of ordered) {
        enqueue(run, item, inside);
      }
      for (const { uri, index, item } of ordered) {
        const node = this.requests.get(item)!;
        if (token.isCancellationRequested) {
          skip(run, item, inside);
          continue;
        }
        if (inside(item)) {
          run.started(item);
        }
        let outcome: Outcome | undefined;
        try {
          // The server sends from its open documents: a file not open is opened (not shown).
          if (!vscode.workspace.textDocuments.some((document) => document.uri.toString() === uri)) {
            await vscode.workspace.openTextDocument(item.uri!);
          }
          outcome = await this.host.send({ uri, index }, token);
        } catch (error) {
          const message = failureMessage(error);
          if (message === undefined || token.isCancellationRequested) {
            skip(run, item, inside);
          } else if (inside(item)) {
            run.errored(item, testMessage(message.replace(/^Volley: /, ''), item.uri!, node.line));
          }
          continue;
        }
        if (!outcome) {
          if (inside(item)) {
            run.errored(item, testMessage('The Volley language server is not running.', item.uri!, node.line));
          }
          continue;
        }
        reportOutcome(run, item, node, outcome, inside, (id, label, at) => this.controller.createTestItem(id, label, at));
      }
    } finally {
      run.end();
    }
  }

  /** The request items a picked item runs: a file's (asked for first if needed), a request, a check's request. */
  private async requestItems(item: vscode.TestItem): Promise<vscode.TestItem[]> {
    if (!item.parent) {
      const pending = this.pending.get(item.id);
      if (!this.resolved.has(item.id) || pending) {
        clearTimeout(pending);
        this.pending.delete(item.id);
        await this.resolve(item);
      }
      const children: vscode.TestItem[] = [];
      item.children.forEach((child) => children.push(child));
      return children;
    }
    return this.requests.has(item) ? [item] : item.parent ? [item.parent] : [];
  }
}

function isTestDocument(document: vscode.TextDocument): boolean {
  return document.uri.scheme === 'file' && (document.languageId === 'http' || isTestFile(document.uri.path));
}
