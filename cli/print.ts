// What a command prints on stdout, fitted to the screen: a terminal's width unless --wide (shared/io/screen.ts),
// each line longer than that wrapped (tables are fitted where they are made, with the same width).
import { wrapText } from '../shared/accounting/wrap.js';
import { screenWidth } from '../shared/io/screen.js';

/** The screen's width for a command's arguments: every command carries the global --wide. */
export const widthOf = (a: object): number => screenWidth('wide' in a && a.wide === true);

/** `text` and a newline on stdout, its lines no wider than the screen. */
export function print(a: object, text: string): void {
  process.stdout.write(`${wrapText(text, widthOf(a))}\n`);
}
