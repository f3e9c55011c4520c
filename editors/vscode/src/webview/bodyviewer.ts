// The response panel's only script: the viewer of large bodies. The page holds an empty
// box per large body (`bodyview.ts`); the script says `ready`, the panel posts each
// body's text in slices (`{type: 'body', id, chunk, done}`), and the viewer indexes the
// rows a few milliseconds at a time and draws only the rows in view (and a few around),
// so that the window answers keys while a body of any size arrives. Bundled by esbuild
// into `dist/bodyviewer.js`, which the panel puts in the page with its nonce.

import { escapeText, highlightJsonLine, ROW_CHARS, RowIndex } from '../bodyrows';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

/** Rows drawn above and below the ones in view. */
const OVERSCAN = 40;
/** The most work one task does before the page may draw and answer keys again. */
const SLICE_MS = 4;
/** Rows indexed between two looks at the clock. */
const ROWS_PER_CHECK = 2000;
/** The tallest box drawn; more rows than fit are reached by scaling the scroll position. */
const MAX_HEIGHT_PX = 8_000_000;
/** The fewest and the most characters of a row, whatever the box's width. */
const MIN_ROW_CHARS = 40;
const MAX_ROW_CHARS = 2000;

interface BodyMessage {
  type: 'body';
  /** The `ready` it answers: slices meant for an earlier load of the page are dropped. */
  session: string;
  id: string;
  /** Where the slice starts in the body's text. */
  offset: number;
  chunk: string;
  done: boolean;
}

/** This load of the page. */
const session = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

class Viewer {
  private text = '';
  private complete = false;
  private index = new RowIndex();
  /** The characters a row holds: as many as the box is wide (measured once the text comes). */
  private rowChars = 0;
  private readonly scroller: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly rows: HTMLElement;
  private readonly progress: HTMLElement | null;
  private readonly json: boolean;
  private rowHeight = 0;
  private indexing = false;
  private drawScheduled = false;
  private drawn = { from: -1, to: -1, rows: -1, top: -1 };

  constructor(private readonly element: HTMLElement) {
    this.scroller = element.querySelector('.body-scroller') as HTMLElement;
    this.spacer = element.querySelector('.body-spacer') as HTMLElement;
    this.rows = element.querySelector('.body-rows') as HTMLElement;
    this.progress = element.querySelector('.body-progress');
    this.json = element.dataset.mode === 'json';
    this.scroller.addEventListener('scroll', () => this.scheduleDraw(), { passive: true });
    window.addEventListener('resize', () => this.resized());
  }

  receive(offset: number, chunk: string, done: boolean): void {
    if (offset !== this.text.length) {
      return;
    }
    if (this.rowChars === 0) {
      this.rowChars = this.fittingRowChars();
      this.index = new RowIndex(this.rowChars);
    }
    this.text += chunk;
    this.complete = done;
    this.startIndexing();
  }

  private startIndexing(): void {
    if (!this.indexing) {
      this.indexing = true;
      setTimeout(() => this.indexSlice(), 0);
    }
  }

  /** As many characters as fit the box's width (the font is monospace). */
  private fittingRowChars(): number {
    const probe = document.createElement('span');
    probe.textContent = 'x'.repeat(100);
    this.rows.appendChild(probe);
    const charWidth = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const width = this.scroller.clientWidth;
    if (!(charWidth > 0) || !(width > 0)) {
      return ROW_CHARS;
    }
    return Math.max(MIN_ROW_CHARS, Math.min(MAX_ROW_CHARS, Math.floor(width / charWidth) - 2));
  }

  /** A box much wider or narrower than its rows: the rows are cut again to fit it. */
  private resized(): void {
    if (this.rowChars !== 0) {
      const fitting = this.fittingRowChars();
      if (Math.abs(fitting - this.rowChars) > this.rowChars / 10) {
        this.rowChars = fitting;
        this.index = new RowIndex(fitting);
        this.drawn = { from: -1, to: -1, rows: -1, top: -1 };
        this.startIndexing();
      }
    }
    this.scheduleDraw();
  }

  /** Indexes rows for at most `SLICE_MS`, draws what is in view, and goes on in a later task. */
  private indexSlice(): void {
    const until = performance.now() + SLICE_MS;
    let covered = false;
    do {
      covered = this.index.index(this.text, this.complete, ROWS_PER_CHECK);
    } while (!covered && performance.now() < until);
    this.draw();
    if (!covered) {
      setTimeout(() => this.indexSlice(), 0);
      return;
    }
    this.indexing = false;
    if (this.complete && this.index.covers(this.text)) {
      this.element.dataset.state = 'done';
      if (this.progress) {
        this.progress.textContent = `${this.index.rows.toLocaleString('en')} ${this.index.rows === 1 ? 'row' : 'rows'}`;
      }
    } else if (this.progress) {
      this.progress.textContent = `Loading the body… ${this.index.rows.toLocaleString('en')} rows so far`;
    }
  }

  private scheduleDraw(): void {
    if (!this.drawScheduled) {
      this.drawScheduled = true;
      requestAnimationFrame(() => {
        this.drawScheduled = false;
        this.draw();
      });
    }
  }

  private draw(): void {
    const total = this.index.rows;
    if (total === 0) {
      return;
    }
    if (this.rowHeight === 0) {
      this.rows.innerHTML = '<div>x</div>';
      this.rowHeight = Math.max(1, (this.rows.firstElementChild as HTMLElement).getBoundingClientRect().height);
      this.element.style.setProperty('--row-height', `${this.rowHeight}px`);
    }
    const height = this.rowHeight;
    const full = total * height;
    const boxHeight = Math.min(full, MAX_HEIGHT_PX);
    if (this.drawn.rows !== total) {
      this.spacer.style.height = `${boxHeight}px`;
    }
    const viewport = this.scroller.clientHeight || 600;
    const inView = Math.ceil(viewport / height) + 1;
    const scrollTop = this.scroller.scrollTop;
    const first =
      full <= MAX_HEIGHT_PX
        ? Math.floor(scrollTop / height)
        : Math.floor((scrollTop / Math.max(1, boxHeight - viewport)) * Math.max(0, total - inView));
    const from = Math.max(0, Math.min(first, total - 1) - OVERSCAN);
    const to = Math.min(total, first + inView + OVERSCAN);
    const top = full <= MAX_HEIGHT_PX ? from * height : scrollTop - (first - from) * height;
    const grewInView = this.drawn.to === this.drawn.rows && total !== this.drawn.rows;
    if (from === this.drawn.from && to === this.drawn.to && top === this.drawn.top && !grewInView) {
      this.drawn.rows = total;
      return;
    }
    let html = '';
    for (let row = from; row < to; row += 1) {
      const line = this.text.slice(this.index.start(row), this.index.end(row, this.text));
      const shown = this.json && this.index.wholeLine(row, this.text) ? highlightJsonLine(line) : escapeText(line);
      html += `<div>${shown || ' '}</div>`;
    }
    this.rows.innerHTML = html;
    this.rows.style.transform = `translateY(${top}px)`;
    this.drawn = { from, to, rows: total, top };
  }
}

const viewers = new Map<string, Viewer>();
for (const element of Array.from(document.querySelectorAll<HTMLElement>('.body-view'))) {
  const id = element.dataset.body;
  if (id) {
    viewers.set(id, new Viewer(element));
  }
}
window.addEventListener('message', (event: MessageEvent) => {
  const message = event.data as BodyMessage;
  if (message?.type === 'body' && message.session === session) {
    viewers.get(message.id)?.receive(message.offset, message.chunk, message.done);
  }
});
if (viewers.size > 0) {
  acquireVsCodeApi().postMessage({ type: 'ready', session, bodies: [...viewers.keys()] });
}
