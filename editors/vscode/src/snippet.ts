// Code snippets (REST Client's "Generate Code Snippet"): what `volley.snippet` answers,
// the quick pick of its languages and the editor language each snippet opens in. The
// language server builds the request as `volley.copyAsCurl` does (docs/lsp.md). Pure: no
// `vscode` import.

/** `volley.snippet {}`: the languages the server writes. */
export interface SnippetLanguages {
  languages: { id: string; label: string }[];
}

/** `volley.snippet {uri, line, language}`: the code, and what it could not carry over. */
export interface SnippetResult {
  language: string;
  code: string;
  warnings?: string[];
}

/** The VS Code language of a snippet language (`plaintext` for one not known here). */
export function snippetEditorLanguage(language: string): string {
  switch (language) {
    case 'curl':
      return 'shellscript';
    case 'fetch':
      return 'javascript';
    case 'python':
      return 'python';
    case 'go':
      return 'go';
    default:
      return 'plaintext';
  }
}

/** The quick pick's lines: the last language used first, then the server's order. */
export function snippetChoices(
  answer: SnippetLanguages | null | undefined,
  last: string | undefined,
): { label: string; description: string; id: string }[] {
  const languages = (answer?.languages ?? []).filter(
    (language) => typeof language?.id === 'string' && typeof language?.label === 'string',
  );
  const ordered = [
    ...languages.filter((language) => language.id === last),
    ...languages.filter((language) => language.id !== last),
  ];
  return ordered.map((language) => ({ label: language.label, description: language.id, id: language.id }));
}

/** The warning message for a snippet's warnings; undefined when it has none. */
export function snippetWarning(result: SnippetResult): string | undefined {
  const warnings = result.warnings ?? [];
  return warnings.length === 0 ? undefined : `Volley: the ${result.language} snippet differs from the request: ${warnings.join(' ')}`;
}
