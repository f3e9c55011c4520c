// The panel's actions on a response's body: open the whole body (the language server's
// `bodyFile` when it cut the body, else the kept body in an untitled editor), open the
// body in an editor, and save it. A whole body is only ever copied or opened as a file:
// never read into the extension's memory.

import * as vscode from 'vscode';
import { editorContent, presentBody } from './bodyview';
import { bodyBytes, suggestedBodyName } from './history';
import type { Outcome } from './outcome';

/** Opens the body in an untitled editor (pretty JSON within the limit) of its language. */
export async function openInEditor(outcome: Outcome): Promise<void> {
  const content = editorContent(outcome);
  if (!content) {
    void vscode.window.showInformationMessage('Volley: this request has no response body: it was not sent.');
    return;
  }
  const document = await vscode.workspace.openTextDocument(content);
  await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}

/** Opens the whole body: its file when the server cut it, else what the panel has. */
export async function openFullBody(outcome: Outcome): Promise<void> {
  const file = outcome.response?.bodyFile;
  if (!file) {
    if (outcome.response?.truncated) {
      void vscode.window.showWarningMessage(
        'Volley: only the first part of this body was kept (the language server wrote no file of the whole body): opening that.',
      );
    }
    await openInEditor(outcome);
    return;
  }
  const uri = vscode.Uri.file(file);
  if (!(await exists(uri))) {
    void vscode.window.showErrorMessage(`Volley: the file of the whole body is gone: ${file}. Send the request again.`);
    return;
  }
  await vscode.commands.executeCommand('vscode.open', uri, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}

/**
 * Saves the body where the user picks: the whole body's file copied when the server
 * wrote one (`workspace.fs.copy`, never read), else the body as received (base64
 * decoded), with a warning when it was cut.
 */
export async function saveBody(outcome: Outcome): Promise<void> {
  const response = outcome.response;
  if (!response) {
    void vscode.window.showInformationMessage('Volley: this request has no response body: it was not sent.');
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({
    title: 'Save response body',
    defaultUri: folder ? vscode.Uri.joinPath(folder, suggestedBodyName(outcome)) : undefined,
  });
  if (!target) {
    return;
  }
  if (response.bodyFile) {
    const source = vscode.Uri.file(response.bodyFile);
    if (!(await exists(source))) {
      void vscode.window.showErrorMessage(
        `Volley: the file of the whole body is gone: ${response.bodyFile}. Send the request again.`,
      );
      return;
    }
    await vscode.workspace.fs.copy(source, target, { overwrite: true });
    const { size } = await vscode.workspace.fs.stat(target);
    void vscode.window.showInformationMessage(`Volley: saved the whole body, ${size} bytes, to ${target.fsPath}.`);
    return;
  }
  const body = bodyBytes(outcome);
  if (!body) {
    return;
  }
  await vscode.workspace.fs.writeFile(target, body.bytes);
  const shown = presentBody(response, { pretty: false });
  const message = `Volley: saved ${body.bytes.length} bytes to ${target.fsPath}.`;
  if (body.truncated) {
    const total = shown.kind === 'empty' ? body.bytes.length : shown.totalBytes;
    void vscode.window.showWarningMessage(
      `${message} The body was truncated: only its first ${body.bytes.length} of ${total} bytes were kept, and saved.`,
    );
  } else {
    void vscode.window.showInformationMessage(message);
  }
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}
