// WebSocket close reasons travel in a control frame of at most 125 bytes: 2 for the code, 123 for the text.

/** `text` cut to fit a close frame, on a character boundary; never throws. */
export function closeReason(text: string): string {
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > 123) break;
    out += ch;
    bytes += n;
  }
  return out;
}
