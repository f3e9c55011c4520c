// The rows of a large body as the response panel's viewer shows them: the text cut at
// its newlines and every `ROW_CHARS` characters, indexed a slice at a time (so that the
// page never works for long between two frames) and while the text still arrives, and
// one JSON line highlighted at a time. Shared by the webview's script
// (`webview/bodyviewer.ts`) and the tests. Pure: no DOM, no `vscode`.
//
// Invariants: rows cover the text in order without gaps or overlap; a row never holds a
// newline; a row is at most `rowChars` characters long (one less when a surrogate pair
// would be cut); indexing a text in any number of slices, as it grows, gives the same
// rows as indexing it whole.

/** How many characters a row holds at most: longer lines are cut into several rows. */
export const ROW_CHARS = 256;

export class RowIndex {
  private starts = new Uint32Array(1024);
  private count = 0;
  /** Where the next row starts. */
  private next = 0;
  /** The first newline at or after `next`, when known (else below `next`). */
  private newlineAt = -1;
  /** The text before this offset (from `next` on) holds no newline. */
  private searchedTo = 0;

  constructor(private readonly rowChars: number = ROW_CHARS) {}

  /** How many rows are indexed. */
  get rows(): number {
    return this.count;
  }

  /** Whether every character of `text` is in a row. */
  covers(text: string): boolean {
    return this.next >= text.length;
  }

  /**
   * Indexes up to `budget` more rows of `text`, which may still grow (`complete` false:
   * a last line not ended yet waits for more unless it already fills a row). Answers
   * whether the text so far is all indexed.
   */
  index(text: string, complete: boolean, budget: number): boolean {
    for (let added = 0; added < budget; added += 1) {
      const at = this.next;
      if (at >= text.length) {
        return true;
      }
      const newline = this.findNewline(text, at);
      if (newline !== -1 && newline - at <= this.rowChars) {
        this.push(at);
        this.next = newline + 1;
      } else if (newline !== -1 || text.length - at > this.rowChars) {
        this.push(at);
        let end = at + this.rowChars;
        // A surrogate pair stays whole in the next row.
        const last = text.charCodeAt(end - 1);
        if (last >= 0xd800 && last <= 0xdbff) {
          end -= 1;
        }
        this.next = end;
      } else if (complete) {
        this.push(at);
        this.next = text.length;
      } else {
        return true;
      }
    }
    return this.next >= text.length;
  }

  /** The offset of row `row`'s first character. */
  start(row: number): number {
    return this.starts[row];
  }

  /** The offset just past row `row`'s last character (its newline and a `\r` before it excluded). */
  end(row: number, text: string): number {
    let end = row + 1 < this.count ? this.starts[row + 1] : this.next;
    if (text.charCodeAt(end - 1) === 10) {
      end -= 1;
      if (end > this.starts[row] && text.charCodeAt(end - 1) === 13) {
        end -= 1;
      }
    }
    return end;
  }

  /** Whether row `row` is a whole line: it starts one and ends at a newline or the text's end. */
  wholeLine(row: number, text: string): boolean {
    const start = this.starts[row];
    if (start > 0 && text.charCodeAt(start - 1) !== 10) {
      return false;
    }
    const next = row + 1 < this.count ? this.starts[row + 1] : this.next;
    return next >= text.length || text.charCodeAt(next - 1) === 10;
  }

  private push(start: number): void {
    if (this.count === this.starts.length) {
      const grown = new Uint32Array(this.starts.length * 2);
      grown.set(this.starts);
      this.starts = grown;
    }
    this.starts[this.count] = start;
    this.count += 1;
  }

  private findNewline(text: string, at: number): number {
    if (this.newlineAt >= at) {
      return this.newlineAt;
    }
    const found = text.indexOf('\n', Math.max(at, this.searchedTo));
    if (found === -1) {
      this.searchedTo = text.length;
      return -1;
    }
    this.newlineAt = found;
    return found;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` safe inside an element (the same escaping as `html.ts`, here for the webview's bundle). */
export function escapeText(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]);
}

/**
 * One line of pretty-printed JSON as HTML, with the classes of `json.ts`'s highlighting
 * (`json-key`, `json-string`, `json-number`, `json-literal`, `json-punctuation`). A line
 * of pretty JSON holds whole tokens only; anything unexpected is escaped as it is.
 */
export function highlightJsonLine(line: string): string {
  let html = '';
  const token = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null)\b|([{}[\],:])|(\s+)|([^\s"{}[\],:]+|")/gy;
  token.lastIndex = 0;
  let found: RegExpExecArray | null;
  while ((found = token.exec(line)) !== null) {
    const [, string, colon, number, literal, punctuation, space, other] = found;
    if (string !== undefined) {
      html += `<span class="json-${colon === undefined ? 'string' : 'key'}">${escapeText(string)}</span>`;
      if (colon !== undefined) {
        html += `${colon.slice(0, -1)}<span class="json-punctuation">:</span>`;
      }
    } else if (number !== undefined) {
      html += `<span class="json-number">${number}</span>`;
    } else if (literal !== undefined) {
      html += `<span class="json-literal">${literal}</span>`;
    } else if (punctuation !== undefined) {
      html += `<span class="json-punctuation">${punctuation}</span>`;
    } else {
      html += escapeText(space ?? other ?? '');
    }
  }
  return html;
}
