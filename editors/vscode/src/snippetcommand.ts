// "Volley: Generate Code Snippet": asks for a language (the server's list, `volley.snippet
// {}`), has the server write the cursor's request in it, and opens the code in an untitled
// editor of the right language; what the code could not carry over is a warning.

import * as vscode from 'vscode';
import { snippetChoices, snippetEditorLanguage, snippetWarning, type SnippetLanguages, type SnippetResult } from './snippet';

/** The server's command (docs/lsp.md). */
export const SNIPPET_COMMAND = 'volley.snippet';

/** The language picked last, offered first next time (for the session). */
let lastLanguage: string | undefined;

export async function generateSnippet(
  request: { uri: string; line?: number; index?: number } | undefined,
  call: <T>(command: string, argument: unknown) => Promise<T>,
  showFailure: (error: unknown) => void,
): Promise<void> {
  if (!request) {
    void vscode.window.showInformationMessage('Volley: put the cursor in a request of a .http file to generate code for it.');
    return;
  }
  try {
    const choices = snippetChoices(await call<SnippetLanguages>(SNIPPET_COMMAND, {}), lastLanguage);
    if (choices.length === 0) {
      void vscode.window.showWarningMessage('Volley: the language server offers no snippet languages.');
      return;
    }
    const picked = await vscode.window.showQuickPick(choices, { title: 'Volley: generate code for the request in…' });
    if (!picked) {
      return;
    }
    lastLanguage = picked.id;
    const result = await call<SnippetResult>(SNIPPET_COMMAND, { ...request, language: picked.id });
    const document = await vscode.workspace.openTextDocument({
      language: snippetEditorLanguage(result.language ?? picked.id),
      content: result.code,
    });
    await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    const warning = snippetWarning(result);
    if (warning) {
      void vscode.window.showWarningMessage(warning);
    }
  } catch (error) {
    showFailure(error);
  }
}
