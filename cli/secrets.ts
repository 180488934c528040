// The secrets a command reads from files: PEM certificates and keys, and the join token (a Docker or
// Kubernetes secret). Each failure names the option and the file.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../shared/control/run-config.js';

export function readPem(path: string, option: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${option} ${path}: ${(err as Error).message}`);
  }
}

/** The join token from --token or from a file (a Docker or Kubernetes secret), never both. */
export function joinToken(token: string | undefined, file: string | undefined): string | undefined {
  if (file === undefined) return token;
  if (token !== undefined) throw new ConfigError('--token and --token-file (or ZEROWIRE_TOKEN and ZEROWIRE_TOKEN_FILE) both given: use one');
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/\s+$/, '');
  } catch (err) {
    throw new ConfigError(`--token-file ${file}: ${(err as Error).message}`);
  }
  if (!text) throw new ConfigError(`--token-file ${file}: the file is empty`);
  return text;
}
