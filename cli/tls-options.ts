// --tls-cert, --tls-key and --tls-ca, the same on the coordinator, a rank and `local`. With TLS the
// coordinator serves wss:// and every ring link is TLS too (a run is encrypted everywhere or nowhere; the
// coordinator refuses a rank that would break that).
import type { Argv } from 'yargs';
import { ConfigError } from '../shared/control/run-config.js';
import type { LinkTls } from '../shared/transport/link-tls.js';
import { readPem } from './secrets.js';

export function tlsOptions<T>(y: Argv<T>) {
  return y
    .option('tls-cert', { type: 'string', describe: 'PEM certificate: serve wss:// and encrypt every ring link (with --tls-key)' })
    .option('tls-key', { type: 'string', describe: 'PEM private key for --tls-cert' })
    .option('tls-ca', {
      type: 'string',
      describe: "PEM CA that signed the run's certificates, checked on every connection (default: --tls-cert, one self-signed certificate for the cluster)",
    });
}

export interface TlsArgs {
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
}

/** The files read, or undefined without --tls-cert. `--tls-ca` alone only says whom to trust (a rank). */
export function readTls(a: TlsArgs): LinkTls | undefined {
  if ((a.tlsCert === undefined) !== (a.tlsKey === undefined)) throw new ConfigError('--tls-cert and --tls-key go together');
  if (a.tlsCert === undefined) return undefined;
  const cert = readPem(a.tlsCert, '--tls-cert');
  const key = readPem(a.tlsKey!, '--tls-key');
  for (const [pem, option, what] of [
    [cert, '--tls-cert', 'CERTIFICATE'],
    [key, '--tls-key', 'PRIVATE KEY'],
  ] as const)
    if (!new RegExp(`-----BEGIN [A-Z ]*${what}-----`).test(pem.toString('latin1')))
      throw new ConfigError(`${option} ${option === '--tls-cert' ? a.tlsCert : a.tlsKey}: not a PEM ${what.toLowerCase()}`);
  return { cert, key, ca: a.tlsCa === undefined ? cert : readPem(a.tlsCa, '--tls-ca') };
}

/** The same options again, for a child process (local's ranks). */
export function tlsArgv(a: TlsArgs): string[] {
  return Object.entries({ '--tls-cert': a.tlsCert, '--tls-key': a.tlsKey, '--tls-ca': a.tlsCa }).flatMap(([k, v]) => (v === undefined ? [] : [k, v]));
}
