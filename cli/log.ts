// pino to stderr (stdout is kept for the report). Human-readable lines by default, coloured on a terminal;
// --log-format json for JSON lines (a log collector's, or the tests' that read the fields).
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['pretty', 'json'] as const;

export function createLogger(level: string, name: string, format: string = 'pretty'): Logger {
  const dest =
    format === 'json'
      ? pino.destination({ dest: 2, sync: true })
      : pretty({
          destination: 2,
          colorize: process.stderr.isTTY,
          sync: true,
          // One line per event: the messages are sentences that carry their figures; the fields stay in JSON.
          hideObject: true,
          ignore: 'pid,hostname',
          translateTime: 'SYS:HH:MM:ss.l',
        });
  return pino({ level, name, base: { pid: process.pid } }, dest);
}
