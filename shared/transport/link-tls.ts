// TLS on ring links (--tls-cert/--tls-key/--tls-ca on a rank). Every rank serves its ring port with the
// cluster's certificate and checks the certificate of the rank it dials against the cluster's CA. The peer
// is addressed by whatever IP the coordinator saw, so the name in the certificate is not checked: a peer
// proves it is this run's rank by the HMAC hello (auth.ts), TLS adds secrecy and a CA-signed server.
import type { TLSSocket } from 'node:tls';

export interface LinkTls {
  cert: Buffer;
  key: Buffer;
  ca: Buffer; // the CA (or the one self-signed certificate) every rank's certificate is checked against
}

/** What a link negotiated, for the report. */
export interface LinkCipher {
  protocol: string;
  cipher: string;
}

export function cipherOf(socket: TLSSocket): LinkCipher {
  return { protocol: socket.getProtocol() ?? 'TLS', cipher: socket.getCipher().standardName ?? socket.getCipher().name };
}

/** OpenSSL's verification codes, said as what the operator should check. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
]);

/** A TLS failure on a link as a sentence that names the likely cause; other errors pass through. */
export function tlsFailure(err: Error & { code?: string }): string {
  const code = err.code ?? '';
  if (UNTRUSTED.has(code))
    return `its TLS certificate is not signed by the CA this rank trusts (${code}): give every rank the same --tls-ca, and certificates it signed`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `its TLS certificate is not valid now (${code})`;
  if (/wrong version number|packet length too long|http request/i.test(err.message))
    return `it does not speak TLS (${err.message.trim()}): start every rank with --tls-cert and --tls-key, or none`;
  if (/alert unknown ca|alert bad certificate|certificate unknown/i.test(err.message))
    return `it refused this rank's TLS certificate (${err.message.trim()}): give every rank the same --tls-ca`;
  return err.message;
}
