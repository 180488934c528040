// pino to stderr (stdout is kept for the report): pretty on a terminal, JSON lines otherwise.
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function createLogger(level: string, name: string): Logger {
  const dest = process.stderr.isTTY
    ? pretty({ destination: 2, colorize: true, ignore: 'pid,hostname', sync: true })
    : pino.destination({ dest: 2, sync: true });
  return pino({ level, name, base: { pid: process.pid } }, dest);
}
