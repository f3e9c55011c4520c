// "Volley: Select Profile": the server lists the profiles that apply to a .http file
// (`volley.profiles`), the user picks one (or none), and the server takes it
// (`volley.selectProfile`).

import * as vscode from 'vscode';
import { ServerCommands } from './commands';
import { normalizeProfile, profileChoices, ProfilesResult, selectProfileArgument } from './profile';

/**
 * Asks which profile `document`'s runs use, `current` marked. Answers the profile the
 * server took (`undefined` in it: none), or `undefined` when nothing changed: no
 * document, the pick dismissed, or a command failed (`call` shows the failure).
 */
export async function chooseProfile(
  document: vscode.TextDocument | undefined,
  current: string | undefined,
  call: <T>(command: string, argument: unknown) => Promise<T | undefined>,
): Promise<{ profile: string | undefined } | undefined> {
  if (!document) {
    void vscode.window.showInformationMessage('Volley: open a .http file to choose its profile.');
    return undefined;
  }
  const result = await call<ProfilesResult>(ServerCommands.profiles, { uri: document.uri.toString() });
  if (result === undefined) {
    return undefined;
  }
  if (result.error) {
    void vscode.window.showWarningMessage(`Volley: ${result.error}`);
  }
  const picked = await vscode.window.showQuickPick(profileChoices(result, current), {
    title: 'Volley profile',
    placeHolder: result.config ? `Profiles of ${result.config}` : 'No volley.jsonc applies to this file',
  });
  if (!picked) {
    return undefined;
  }
  const answer = await call<{ active?: string | null } | null>(
    ServerCommands.selectProfile,
    selectProfileArgument(picked.profile),
  );
  if (answer === undefined) {
    return undefined;
  }
  return { profile: normalizeProfile(answer?.active ?? picked.profile) };
}
