// Who may join: the join token, the protocol version, the run's phase and size, duplicates, the rank id
// and world size a rank asks for, and the model it insists on. A pure function of the join and the
// coordinator's state, so it is tested directly.
import { sameSecret } from '../shared/transport/auth.js';
import { PROTOCOL_VERSION, type ControlMessage } from '../shared/control/messages.js';

export type JoinMessage = Extract<ControlMessage, { type: 'join' }>;

interface Joined {
  hostname: string;
  pid: number;
  from: string; // remote address of its control connection
  requested?: number; // the rank id it asked for
}

export interface AdmissionState {
  token?: string; // compared in constant time, never logged
  phase: 'joining' | 'running' | 'finished' | 'failed';
  world: number | 'auto';
  members: readonly Joined[];
  model: string; // as --model describes it (the spec's describe())
  tls: boolean; // the coordinator serves wss://, so every ring link must be TLS too
}

/** Why a join is refused, or null. The reason goes back to the rank as the close reason. */
export function joinRefusal(msg: JoinMessage, from: string, s: AdmissionState): string | null {
  if (s.token !== undefined && !sameSecret(msg.token ?? '', s.token)) return 'refused: missing or wrong join token';
  if (msg.version !== PROTOCOL_VERSION) return `refused: protocol version ${msg.version} is not ${PROTOCOL_VERSION}; run the same zerowire version everywhere`;
  if (s.phase !== 'joining') return 'refused: the run has already started';
  if (s.world !== 'auto' && s.members.length >= s.world) return `refused: the run is full (${s.world} ranks)`;
  if (s.members.some((m) => m.hostname === msg.hostname && m.pid === msg.pid && m.from === from))
    return `refused: this process (${msg.hostname} pid ${msg.pid}) has already joined`;
  if (msg.rankId !== undefined) {
    if (s.world !== 'auto' && msg.rankId >= s.world)
      return `refused: this rank asks for rank ${msg.rankId}, but the run has ${s.world} ranks (0..${s.world - 1})`;
    const holder = s.members.find((m) => m.requested === msg.rankId);
    if (holder)
      return `refused: rank ${msg.rankId} is already taken by ${holder.hostname} pid ${holder.pid}; each rank's RANK / JOB_COMPLETION_INDEX / --rank-id must be unique`;
  }
  if (msg.worldSize !== undefined && s.world !== 'auto' && msg.worldSize !== s.world)
    return `refused: this rank expects WORLD_SIZE ${msg.worldSize}, the run has ${s.world} ranks`;
  if (s.tls && !msg.ringTls)
    return 'refused: this run encrypts its links (the coordinator serves wss://); start the rank with --tls-cert and --tls-key (and --tls-ca) so its ring links are TLS too';
  if (!s.tls && msg.ringTls)
    return 'refused: this rank has --tls-cert but the coordinator serves plain ws://; give the coordinator --tls-cert and --tls-key too, or no TLS anywhere';
  if (msg.model && msg.model !== s.model) return `refused: this rank expects model ${msg.model}, the run trains ${s.model}`;
  return null;
}
