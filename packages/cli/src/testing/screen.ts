import { displayWidth } from '../width.js';

/**
 * A minimal terminal for unit tests of the live view: it understands what log-update and
 * TtyProgress write (text, newline, erase line, cursor up, column 1, clear screen, SGR colours,
 * cursor show/hide) and wraps at `columns` like a real terminal, so a test can assert what is
 * left on screen after a sequence of redraws.
 */
export class FakeScreen {
  readonly isTTY = true;
  grid: string[] = [''];
  private row = 0;
  private col = 0;

  constructor(
    public columns: number,
    public readonly height = 200,
  ) {}

  write(data: string): boolean {
    // eslint-disable-next-line no-control-regex
    const tokens = data.match(/\x1b\[[0-9;?]*[A-Za-z]|\n|[^\x1b\n]+/g) ?? [];
    for (const t of tokens) this.apply(t);
    return true;
  }

  /** The visible lines, trailing empty ones dropped. */
  lines(): string[] {
    const out = this.grid.map((r) => r.replace(/\s+$/, ''));
    while (out.length > 0 && out.at(-1) === '') out.pop();
    return out;
  }

  private apply(t: string): void {
    if (t === '\n') {
      this.row++;
      this.col = 0;
      while (this.grid.length <= this.row) this.grid.push('');
      return;
    }
    if (t.startsWith('\x1b[')) {
      // eslint-disable-next-line no-control-regex -- a terminal emulator parses escape sequences
      const m = /^\x1b\[([0-9;?]*)([A-Za-z])$/.exec(t)!;
      const n = Number(m[1] || '1');
      switch (m[2]) {
        case 'A':
          this.row = Math.max(0, this.row - n);
          return;
        case 'G':
          this.col = 0;
          return;
        case 'H':
          this.row = 0;
          this.col = 0;
          return;
        case 'K':
          this.grid[this.row] = '';
          return;
        case 'J':
          if (m[1] === '2') this.grid = [''];
          else this.grid = this.grid.slice(0, this.row + 1);
          return;
        default:
          return; // colours, cursor visibility
      }
    }
    for (const ch of t) {
      if (this.col + displayWidth(ch) > this.columns) {
        this.row++;
        this.col = 0;
        while (this.grid.length <= this.row) this.grid.push('');
      }
      const line = this.grid[this.row] ?? '';
      this.grid[this.row] = line.padEnd(this.col, ' ').slice(0, this.col) + ch;
      this.col += displayWidth(ch);
    }
  }
}
