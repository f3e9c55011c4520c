// Starting `volley lsp` with vscode-languageclient: the document selector, the lens
// rewriting middleware, the initial profile and execution server, and the restart-on-crash
// policy.

import * as vscode from 'vscode';
import {
  CloseAction,
  DynamicFeature,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  StaticFeature,
} from 'vscode-languageclient/node';
import { rewriteLenses } from './commands';
import { initializationOptions } from './profile';
import { ServerOption } from './remote';
import { RestartPolicy } from './restart';

/**
 * The language client, without the generic `workspace/executeCommand` feature: that
 * feature registers a VS Code command per server command (`volley.send`,
 * `volley.sendAll`, …) that runs it and drops its result, and would collide with the
 * extension's commands of the same names. The extension sends the commands itself.
 */
class VolleyLanguageClient extends LanguageClient {
  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    if ('registrationType' in feature && feature.registrationType.method === ExecuteCommandRequest.method) {
      return;
    }
    super.registerFeature(feature);
  }
}

export interface ClientSettings {
  /** The resolved `volley` binary. */
  binary: string;
  output: vscode.OutputChannel;
  /** The profile to start with, read at every (re)start. */
  profile: () => string | undefined;
  /** The execution server to send through (`volley.server.*`), read at every (re)start. */
  server: () => ServerOption | null;
  restartPolicy: RestartPolicy;
}

export function createClient(settings: ClientSettings): LanguageClient {
  const serverOptions: ServerOptions = { command: settings.binary, args: ['lsp'] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'http' },
      { scheme: 'untitled', language: 'http' },
    ],
    outputChannel: settings.output,
    traceOutputChannel: settings.output,
    // `prompts`: this extension answers `volley/prompt` (prompt.ts).
    initializationOptions: () => ({
      ...initializationOptions(settings.profile()),
      server: settings.server(),
      prompts: true,
    }),
    middleware: {
      provideCodeLenses: async (document, token, next) => rewriteLenses(await next(document, token)),
    },
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue, handled: true }),
      closed: () => {
        const decision = settings.restartPolicy.onCrash(Date.now());
        settings.output.appendLine(decision.message);
        if (decision.restart) {
          void vscode.window.showWarningMessage(decision.message);
          return { action: CloseAction.Restart, handled: true };
        }
        void vscode.window.showErrorMessage(decision.message, 'Show Log', 'Restart').then((choice) => {
          if (choice === 'Show Log') {
            settings.output.show();
          } else if (choice === 'Restart') {
            void vscode.commands.executeCommand('volley.restartServer');
          }
        });
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
  };
  return new VolleyLanguageClient('volley', 'Volley', serverOptions, clientOptions);
}
