// A scheme's end on a rank: its final weights go to the coordinator in pieces, each sent once the one before
// has been handed to the kernel, then its summary. The event loop runs between pieces, so both ends keep
// answering heartbeats; one 134 MB message (DP at 33.6M parameters) did not let them for seconds.
import { WEIGHT_PIECE_BYTES, type ControlMessage, type SchemeSummary } from '../shared/control/messages.js';

/** Send `summary`: its weights (`master`) in `weights` pieces, then the rest as `done`. */
export async function sendSummary({ master, ...summary }: SchemeSummary, send: (m: ControlMessage) => Promise<void>): Promise<void> {
  const { scheme, rank } = summary;
  for (let offset = 0; offset < master.byteLength; offset += WEIGHT_PIECE_BYTES) {
    const bytes = master.subarray(offset, offset + WEIGHT_PIECE_BYTES);
    await send({ type: 'weights', scheme, rank, offset, total: master.byteLength, bytes });
  }
  await send({ type: 'done', summary });
}
