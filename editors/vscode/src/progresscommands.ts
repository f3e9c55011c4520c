// Server commands under a progress indicator: the work-done progress the server
// reports, the streams of a send shown live while the server listens, and cancelling by
// the notification's Cancel, by `volley.cancel` or by a test run's token.

import * as vscode from 'vscode';
import {
  CancellationTokenSource,
  ExecuteCommandRequest,
  LanguageClient,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
} from 'vscode-languageclient/node';
import { executeCommandParams } from './commands';
import { LiveSend } from './live';

/** How long a cancelled command may take to answer before its request is cancelled too. */
const CANCEL_PATIENCE_MS = 2000;

export class ProgressCommands {
  private tokens = 0;
  /** The sends waiting for their answer, by `live` id: their streams shown live. */
  private readonly liveSends = new Map<string, LiveSend>();
  /** How to cancel each command running under a progress notification (`volley.cancel`). */
  private readonly running = new Set<() => void>();

  /**
   * `start` gives the running language server (started if need be; `undefined` when it
   * cannot run); `showFailure` shows a failed command's error (not a test run's).
   */
  constructor(
    private readonly start: () => Promise<LanguageClient | undefined>,
    private readonly showFailure: (error: unknown) => void,
  ) {}

  /** The send under way whose streams the `live` id of a stream notification names. */
  live(id: string): LiveSend | undefined {
    return this.liveSends.get(id);
  }

  /** Cancels every command under way as its notification's Cancel does; false when none is. */
  cancelAll(): boolean {
    for (const cancel of this.running) {
      cancel();
    }
    return this.running.size > 0;
  }

  /**
   * Runs `command` on the language server under a cancellable progress notification. The server
   * reports on the work-done token given here. Cancelling cancels that progress
   * (`window/workDoneProgress/cancel`), so a Send All still answers the requests already
   * sent and a stream what it received; if the server has not answered 2 s later, the
   * request itself is cancelled (`$/cancelRequest`).
   * With `liveTitle`, the streams of the send are shown live under that title while
   * the server listens (the token doubles as the `live` id).
   * With `runCancellation` (a test run's token), the progress shows in the status bar,
   * the token cancels the request at once, and a failure is thrown to the caller.
   */
  async execute<T>(
    command: string,
    argument: unknown,
    title: string,
    liveTitle?: string,
    runCancellation?: vscode.CancellationToken,
  ): Promise<T | undefined> {
    const client = await this.start();
    if (!client) {
      return undefined;
    }
    const workDoneToken = `volley-${process.pid}-${++this.tokens}`;
    if (liveTitle !== undefined) {
      this.liveSends.set(workDoneToken, new LiveSend(workDoneToken, liveTitle));
      argument = { ...(argument as object), live: workDoneToken };
    }
    return vscode.window.withProgress(
      {
        location: runCancellation ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification,
        title: 'Volley',
        cancellable: !runCancellation,
      },
      async (progress, cancellation) => {
        progress.report({ message: title });
        let percentage = 0;
        const listener = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
          if (value.kind === 'end') {
            return;
          }
          const message = value.kind === 'begin' ? [value.title, value.message].filter(Boolean).join(': ') : value.message;
          let increment: number | undefined;
          if (value.percentage !== undefined) {
            increment = Math.max(0, value.percentage - percentage);
            percentage = value.percentage;
          }
          progress.report({ message, increment });
        });
        const request = new CancellationTokenSource();
        let fallback: NodeJS.Timeout | undefined;
        const cancelProgress = (): void => {
          void client.sendNotification(WorkDoneProgressCancelNotification.type, { token: workDoneToken });
        };
        // The notification's Cancel, and `volley.cancel` (Ctrl+Alt+K) alike: the
        // progress at once, the request if the server has not answered 2 s later.
        const cancelPatiently = (): void => {
          cancelProgress();
          fallback ??= setTimeout(() => request.cancel(), CANCEL_PATIENCE_MS);
        };
        const onCancel = cancellation.onCancellationRequested(cancelPatiently);
        this.running.add(cancelPatiently);
        const onRunCancel = runCancellation?.onCancellationRequested(() => {
          cancelProgress();
          request.cancel();
        });
        try {
          return (await client.sendRequest(
            ExecuteCommandRequest.type,
            executeCommandParams(command, argument, workDoneToken),
            request.token,
          )) as T;
        } catch (error) {
          if (runCancellation) {
            throw error;
          }
          this.showFailure(error);
          return undefined;
        } finally {
          clearTimeout(fallback);
          this.running.delete(cancelPatiently);
          onCancel.dispose();
          onRunCancel?.dispose();
          request.dispose();
          listener.dispose();
          this.liveSends.delete(workDoneToken);
        }
      },
    );
  }
}
