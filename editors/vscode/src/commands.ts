// The pure part of sending: the arguments of `volley.send`/`volley.sendAll`, and the
// rewriting of the server's code lenses so that clicks come to the extension.

/** The extension's own commands (package.json `contributes.commands`). */
export const Commands = {
  sendRequest: 'volley.sendRequest',
  sendAll: 'volley.sendAll',
  selectProfile: 'volley.selectProfile',
  showLastResponse: 'volley.showLastResponse',
  restartServer: 'volley.restartServer',
  rerun: 'volley.rerun',
  saveBody: 'volley.saveBody',
  filterBody: 'volley.filterBody',
  copyAsCurl: 'volley.copyAsCurl',
  showSent: 'volley.showSent',
  showHistory: 'volley.showHistory',
  clearCookies: 'volley.clearCookies',
  importFile: 'volley.importFile',
  responseView: 'volley.responseView',
  openBody: 'volley.openBody',
  openInEditor: 'volley.openInEditor',
  compareWithPrevious: 'volley.compareWithPrevious',
  compareHistory: 'volley.compareHistory',
  clearHistory: 'volley.clearHistory',
  generateSnippet: 'volley.generateSnippet',
  cancel: 'volley.cancel',
} as const;

/** The language server's `workspace/executeCommand` commands (docs/lsp.md). */
export const ServerCommands = {
  send: 'volley.send',
  sendAll: 'volley.sendAll',
  selectProfile: 'volley.selectProfile',
  profiles: 'volley.profiles',
  copyAsCurl: 'volley.copyAsCurl',
  clearCookies: 'volley.clearCookies',
  import: 'volley.import',
  filter: 'volley.filter',
  tests: 'volley.tests',
} as const;

/** The formats `volley.import` reads from a file (docs/import.md). */
export const IMPORT_FORMATS = ['postman', 'insomnia', 'openapi', 'har'] as const;

/** What `volley.import` answers (docs/lsp.md). */
export interface ImportResult {
  files: { path: string; text: string }[];
  written: string[];
  unconverted: { location: string; reason: string }[];
}

/**
 * The format of a file to import, from its name and the start of its text: a HAR by
 * its extension or `"log"`, an Insomnia export by `__export_format`, a Postman
 * collection by its schema, an OpenAPI description by `openapi` (JSON or YAML);
 * undefined when none fits (the user is asked).
 */
export function guessImportFormat(fileName: string, text: string): (typeof IMPORT_FORMATS)[number] | undefined {
  const head = text.slice(0, 4096);
  if (/\.har$/i.test(fileName) || /^\s*\{\s*"log"\s*:/.test(head)) {
    return 'har';
  }
  if (head.includes('"__export_format"')) {
    return 'insomnia';
  }
  if (head.includes('schema.getpostman.com') || /"_postman_id"/.test(head)) {
    return 'postman';
  }
  if (/(^|\n)\s*"?openapi"?\s*:/.test(head)) {
    return 'openapi';
  }
  return undefined;
}

/** The history entry a panel action names (`{entry: id}`), if it names one. */
export function entryArgument(argument: unknown): number | undefined {
  return isObject(argument) && typeof argument.entry === 'number' ? argument.entry : undefined;
}

/** The argument of `volley.send`: a request picked by index (a lens) or by line (the cursor). */
export interface SendArguments {
  uri: string;
  index?: number;
  name?: string;
  line?: number;
}

/** The argument of `volley.sendAll`. */
export interface SendAllArguments {
  uri: string;
}

/** Where the cursor is, when the command comes from the palette or a key binding. */
export interface Cursor {
  uri: string;
  /** 0-based. */
  line: number;
}

/**
 * The argument of `volley.send` for a command invocation: the lens's own argument
 * (`{uri, index}`) when it has one, else the cursor's request (`{uri, line}`), else
 * undefined (no `.http` editor, nothing to send).
 */
export function sendArguments(argument: unknown, cursor: Cursor | undefined): SendArguments | undefined {
  if (isObject(argument) && typeof argument.uri === 'string') {
    const picked: SendArguments = { uri: argument.uri };
    if (typeof argument.index === 'number') {
      picked.index = argument.index;
    } else if (typeof argument.name === 'string') {
      picked.name = argument.name;
    } else if (typeof argument.line === 'number') {
      picked.line = argument.line;
    } else if (cursor && cursor.uri === argument.uri) {
      picked.line = cursor.line;
    } else {
      return undefined;
    }
    return picked;
  }
  return cursor ? { uri: cursor.uri, line: cursor.line } : undefined;
}

/** The argument of `volley.sendAll`: the lens's, else the active document's. */
export function sendAllArguments(argument: unknown, activeUri: string | undefined): SendAllArguments | undefined {
  if (isObject(argument) && typeof argument.uri === 'string') {
    return { uri: argument.uri };
  }
  return activeUri === undefined ? undefined : { uri: activeUri };
}

/** The command of a code lens, as VS Code and the language client both shape it. */
export interface LensCommand {
  title: string;
  command: string;
  arguments?: unknown[];
  tooltip?: string;
}

/**
 * The lens command the editor should run for a server lens command: `volley.send`
 * becomes the extension's `volley.sendRequest` (the server's command would be run
 * by the client and its result dropped), `volley.sendAll` stays the extension's
 * command of the same name; arguments are kept. Other commands are left as they are.
 */
export function rewriteLensCommand<T extends LensCommand>(command: T): T {
  if (command.command === ServerCommands.send) {
    return { ...command, command: Commands.sendRequest };
  }
  if (command.command === ServerCommands.sendAll) {
    return { ...command, command: Commands.sendAll };
  }
  return command;
}

/** `lenses` with their commands rewritten (lenses without a command are kept). */
export function rewriteLenses<L extends { command?: LensCommand }>(lenses: L[] | null | undefined): L[] | null | undefined {
  if (!lenses) {
    return lenses;
  }
  for (const lens of lenses) {
    if (lens.command) {
      lens.command = rewriteLensCommand(lens.command);
    }
  }
  return lenses;
}

/** The `workspace/executeCommand` parameters for a server command. */
export function executeCommandParams(
  command: string,
  argument: unknown,
  workDoneToken?: string,
): { command: string; arguments: unknown[]; workDoneToken?: string } {
  const params: { command: string; arguments: unknown[]; workDoneToken?: string } = { command, arguments: [argument] };
  if (workDoneToken !== undefined) {
    params.workDoneToken = workDoneToken;
  }
  return params;
}

/** The JSON-RPC error code of a request cancelled with `$/cancelRequest`. */
export const REQUEST_CANCELLED = -32800;

/** What to tell the user when `workspace/executeCommand` fails; undefined when it was cancelled. */
export function failureMessage(error: unknown): string | undefined {
  if (isObject(error) && error.code === REQUEST_CANCELLED) {
    return undefined;
  }
  const message = isObject(error) && typeof error.message === 'string' ? error.message : String(error);
  return `Volley: ${message}`;
}

/** The last path segment of a URI, for titles. */
export function fileName(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  const name = path.slice(path.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
