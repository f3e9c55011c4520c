// "Volley: Import…": a Postman, Insomnia, OpenAPI or HAR file converted by the language
// server (`volley.import`) into .http files in a folder the user picks.

import * as vscode from 'vscode';
import { guessImportFormat, IMPORT_FORMATS, ImportResult, ServerCommands } from './commands';

/**
 * Imports a Postman, Insomnia, OpenAPI or HAR file: the server converts it
 * (`volley.import`, the code of `volley import`) and writes the files into a folder
 * the user picks; the first one is opened, what was not converted goes to the
 * output channel.
 */
export async function importFile(
  output: vscode.OutputChannel,
  call: <T>(command: string, argument: unknown) => Promise<T | undefined>,
): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: 'Import',
    filters: { 'Postman, Insomnia, OpenAPI, HAR': ['json', 'yaml', 'yml', 'har'], 'All files': ['*'] },
  });
  const source = picked?.[0];
  if (!source) {
    return;
  }
  const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(source));
  const format =
    guessImportFormat(source.path, text) ??
    (await vscode.window.showQuickPick([...IMPORT_FORMATS], { placeHolder: 'What kind of file is it?' }));
  if (!format) {
    return;
  }
  const folder = await vscode.window.showOpenDialog({
    canSelectFiles: false,
    canSelectFolders: true,
    openLabel: 'Write the .http files here',
    defaultUri: vscode.Uri.joinPath(source, '..'),
  });
  const directory = folder?.[0];
  if (!directory) {
    return;
  }
  const result = await call<ImportResult>(
    ServerCommands.import,
    // A local file by its path (its name names a HAR's file), else its text.
    source.scheme === 'file'
      ? { format, source: source.fsPath, directory: directory.fsPath }
      : { format, text, directory: directory.fsPath },
  );
  if (result === undefined) {
    return;
  }
  const first = result.written.find((path) => path.endsWith('.http'));
  if (first) {
    await vscode.window.showTextDocument(vscode.Uri.file(first));
  }
  const written = `Volley: imported ${result.written.length} ${result.written.length === 1 ? 'file' : 'files'}`;
  if (result.unconverted.length > 0) {
    for (const note of result.unconverted) {
      output.appendLine(`import: ${note.location}: ${note.reason}`);
    }
    output.show(true);
    void vscode.window.showWarningMessage(
      `${written}; ${result.unconverted.length} part(s) were not converted (listed in the Volley output).`,
    );
  } else {
    void vscode.window.showInformationMessage(`${written}.`);
  }
}
