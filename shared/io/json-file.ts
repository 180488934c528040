// A user's file read (--hf-config, --deepspeed, --device, --fsdp, --hostfile): a missing or unreadable file,
// or JSON that does not parse, is one line naming the file (and the line and column where parsing stopped).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../control/run-config.js';

/** `path`, or `path/inFolder` when `path` is a folder (a model's folder holds its config.json). */
export function fileOrIn(path: string, inFolder: string): string {
  try {
    return statSync(path).isDirectory() ? join(path, inFolder) : path;
  } catch {
    return path; // reported by readJson with the reason
  }
}

/** Line and column (from 1) of character `at` of `text`. */
function lineColumn(text: string, at: number): string {
  const before = text.slice(0, at).split('\n');
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/** A user's file as text (a JSON or YAML config, a hostfile), or one line naming the option, the file and why. */
export function readText(path: string, option: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable (permission denied)' : code === 'EISDIR' ? 'a folder' : (err as Error).message;
    throw new ConfigError(`${option} ${path}: ${why}`);
  }
}

export function readJson(path: string, option: string): unknown {
  const text = readText(path, option);
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const at = errorPosition(text, message);
    const where = text.trim() === '' ? 'the file is empty' : lineColumn(text, at);
    const what = message.replace(/ in JSON at position \d+.*$/, '').replace(/, (\.\.\.)?"[\s\S]*is not valid JSON$/, '');
    throw new ConfigError(`${option} ${path}: not JSON (${where}: ${what})`);
  }
}

/** Where JSON.parse stopped: V8 gives the position, or (an unexpected token) the text around it: after a
 *  leading "...", ten characters of it before the token; without one, the text from its start. */
function errorPosition(text: string, message: string): number {
  const at = /position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  const around = /^Unexpected token '([\s\S])', (\.\.\.)?"([\s\S]*?)"(?:\.\.\.)? is not valid JSON$/.exec(message);
  const i = around ? text.indexOf(around[3]) : -1;
  if (!around || i < 0) return text.length; // the end of the input
  return i + (around[2] === '...' ? 10 : Math.max(0, around[3].indexOf(around[1])));
}
