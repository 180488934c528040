// pino to stderr (stdout is kept for the report). Human-readable lines by default, coloured on a terminal;
// --log-format json for JSON lines (a log collector's, or the tests' that read the fields).
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { wrapText } from '../shared/accounting/wrap.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['pretty', 'json'] as const;

/** How wide a log line may be: the terminal's, or what the launcher that prefixes this process's lines with
 *  `[rank r]` left of its own terminal (LOG_COLUMNS_ENV, set by `local`); elsewhere no limit. */
export const LOG_COLUMNS_ENV = 'ZW_LOG_COLUMNS'; // not ZEROWIRE_*: yargs would read that as an option
function logColumns(): number {
  if (process.stderr.isTTY && process.stderr.columns > 0) return process.stderr.columns;
  const given = Number(process.env[LOG_COLUMNS_ENV]);
  return Number.isInteger(given) && given > 0 ? given : Infinity;
}

export function createLogger(level: string, name: string, format: string = 'pretty', wide = false): Logger {
  const width = wide ? Infinity : logColumns();
  // What pino-pretty puts before the message: "[HH:MM:ss.lll] LEVEL (name): ".
  const before = `[00:00:00.000] WARN  (${name}): `.length;
  const dest =
    format === 'json'
      ? pino.destination({ dest: 2, sync: true })
      : pretty({
          destination: 2,
          colorize: process.stderr.isTTY,
          sync: true,
          // One line per event: the messages are sentences that carry their figures; the fields stay in JSON.
          // On a terminal a long one continues on lines of its own, indented, rather than off the screen.
          hideObject: true,
          ignore: 'pid,hostname',
          translateTime: 'SYS:HH:MM:ss.l',
          messageFormat: (log, key) => fitMessage(String(log[key] ?? ''), width, before),
        });
  return pino({ level, name, base: { pid: process.pid } }, dest);
}

/** A message that starts `before` columns in, wrapped to `width` with its continuations indented 4. */
function fitMessage(msg: string, width: number, before: number): string {
  if (!Number.isFinite(width) || before + msg.length <= width) return msg;
  const wrapped = wrapText(' '.repeat(before) + msg, width).split('\n');
  return [wrapped[0].slice(before), ...wrapped.slice(1).map((l) => `    ${l.trimStart()}`)].join('\n');
}
