// Pretty-printing and highlighting JSON bodies as HTML, without a parser's round trip:
// the text of every number and string is kept as it was sent (a 64-bit id stays exact).

import { escapeHtml } from './html';

type TokenKind = 'string' | 'number' | 'literal' | 'punctuation';

interface Token {
  kind: TokenKind;
  text: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /true|false|null/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** Whether `text` is one JSON value (surrounding whitespace allowed). */
export function isJson(text: string): boolean {
  if (text.trim() === '') {
    return false;
  }
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * `text`, a valid JSON document, indented by two spaces and highlighted: HTML with
 * `<span class="json-key|json-string|json-number|json-literal|json-punctuation">`.
 * Text that is not JSON is only escaped.
 */
export function highlightJson(text: string): string {
  const tokens = isJson(text) ? tokenize(text) : undefined;
  if (tokens === undefined) {
    return escapeHtml(text);
  }
  let html = '';
  let depth = 0;
  const newline = (): string => '\n' + '  '.repeat(depth);
  tokens.forEach((token, index) => {
    const next = tokens[index + 1];
    if (token.kind !== 'punctuation') {
      const isKey = token.kind === 'string' && next?.text === ':';
      html += span(isKey ? 'key' : token.kind, token.text);
      return;
    }
    switch (token.text) {
      case '{':
      case '[': {
        const empty = next?.text === '}' || next?.text === ']';
        html += span('punctuation', token.text);
        if (!empty) {
          depth += 1;
          html += newline();
        }
        break;
      }
      case '}':
      case ']': {
        const previous = tokens[index - 1];
        const empty = previous?.text === '{' || previous?.text === '[';
        if (!empty) {
          depth -= 1;
          html += newline();
        }
        html += span('punctuation', token.text);
        break;
      }
      case ',':
        html += span('punctuation', ',') + newline();
        break;
      default:
        html += span('punctuation', ':') + ' ';
    }
  });
  return html;
}

function span(kind: string, text: string): string {
  return `<span class="json-${kind}">${escapeHtml(text)}</span>`;
}

/** The tokens of valid JSON text; undefined on anything unexpected. */
function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at];
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') {
      at += 1;
      continue;
    }
    if ('{}[],:'.includes(char)) {
      tokens.push({ kind: 'punctuation', text: char });
      at += 1;
      continue;
    }
    const matched =
      (char === '"' && match(STRING, text, at, 'string')) ||
      match(NUMBER, text, at, 'number') ||
      match(LITERAL, text, at, 'literal');
    if (!matched) {
      return undefined;
    }
    tokens.push(matched);
    at += matched.text.length;
  }
  return tokens;
}

function match(pattern: RegExp, text: string, at: number, kind: TokenKind): Token | undefined {
  pattern.lastIndex = at;
  const found = pattern.exec(text);
  return found ? { kind, text: found[0] } : undefined;
}
