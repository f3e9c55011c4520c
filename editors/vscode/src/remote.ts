// The execution server the language server sends through: the `volley.server.url` and
// `volley.server.token` settings as the server's `server` initialization option.

/** The `server` initialization option of `volley lsp` (docs/lsp.md, "Settings"). */
export interface ServerOption {
  url: string;
  /** Absent: the server's environment variable `VOLLEY_TOKEN` is used. */
  token?: string;
}

/** The settings' values as the option: `null` (send locally) when no URL is set. */
export function serverOption(url: unknown, token: unknown): ServerOption | null {
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  const address = text(url);
  if (address === undefined) {
    return null;
  }
  const secret = text(token);
  return secret === undefined ? { url: address } : { url: address, token: secret };
}
