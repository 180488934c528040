// Certificates for TLS tests, made with openssl: a cluster CA and a certificate it signed (what the docs tell
// an operator to make), and an unrelated self-signed certificate (a stranger's).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCerts {
  dir: string;
  ca: string; // paths
  cert: string;
  key: string;
  strangerCert: string;
  strangerKey: string;
  pem(path: string): Buffer;
  remove(): void;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });

export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'zerowire-certs-'));
  const at = (f: string) => join(dir, f);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '1', '-subj', '/CN=zerowire test CA']);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('key.pem'), '-out', at('req.csr'), '-subj', '/CN=localhost']);
  writeFileSync(at('san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:10.250.0.1\n');
  openssl([
    'x509',
    '-req',
    '-in',
    at('req.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-out',
    at('cert.pem'),
    '-days',
    '1',
    '-extfile',
    at('san.ext'),
  ]);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('stranger.key'), '-out', at('stranger.pem'), '-days', '1', '-subj', '/CN=localhost']);
  return {
    dir,
    ca: at('ca.pem'),
    cert: at('cert.pem'),
    key: at('key.pem'),
    strangerCert: at('stranger.pem'),
    strangerKey: at('stranger.key'),
    pem: (p) => readFileSync(p),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
