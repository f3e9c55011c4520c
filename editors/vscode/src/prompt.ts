/**
 * httpyac's and REST Client's prompts (`$input`, `$password`, `$pick`, `# @prompt`), which
 * the language server asks with its `volley/prompt` request (docs/lsp.md): an input box,
 * hidden for a password, or a quick pick of the choices. Dismissing it answers nothing:
 * the request is then refused, naming the prompt. No `vscode` import: the window is
 * passed in.
 */

/** The server's request. */
export const PROMPT_REQUEST = 'volley/prompt';

/** What the server asks. */
export interface PromptParams {
  kind?: string;
  label?: string;
  default?: string | null;
  choices?: unknown[];
}

/** The part of `vscode.window` a prompt uses. */
export interface PromptWindow {
  showInputBox(options: {
    title?: string;
    prompt?: string;
    value?: string;
    password?: boolean;
    ignoreFocusOut?: boolean;
  }): PromiseLike<string | undefined>;
  showQuickPick(
    items: string[],
    options: { title?: string; placeHolder?: string; ignoreFocusOut?: boolean },
  ): PromiseLike<string | undefined>;
}

/** The answer to send back: `{value}`, or null when the user dismissed the question. */
export async function answerPrompt(params: PromptParams, window: PromptWindow): Promise<{ value: string } | null> {
  const label = typeof params?.label === 'string' && params.label !== '' ? params.label : 'a value';
  const offered = typeof params?.default === 'string' ? params.default : undefined;
  if (params?.kind === 'pick') {
    const choices = Array.isArray(params.choices) ? params.choices.map(String) : [];
    const picked = await window.showQuickPick(choices, {
      title: `Volley: ${label}`,
      placeHolder: offered,
      ignoreFocusOut: true,
    });
    return picked === undefined ? null : { value: picked };
  }
  const value = await window.showInputBox({
    title: 'Volley',
    prompt: label,
    value: offered,
    password: params?.kind === 'password',
    ignoreFocusOut: true,
  });
  return value === undefined ? null : { value };
}
