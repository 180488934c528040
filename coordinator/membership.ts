// Who is in the run: each control connection from its first message (a join that passes admission, or a
// refusal told to the operator) to its close, with its liveness watched and its message size capped. What
// the members say is handed to the coordinator; how the run reacts to a member's loss is the coordinator's.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { decodeControl, type ControlMessage } from '../shared/control/messages.js';
import { closeReason } from '../shared/transport/close-reason.js';
import { Liveness, livenessFor, LIVENESS } from '../shared/transport/liveness.js';
import { announcedBytes, limitMessages, socketOf } from '../shared/transport/ws-internals.js';
import { joinRefusal, type AdmissionState } from './admission.js';
import { plainAddress } from './control-server.js';
import { CoordinatorError, type Member, type RankInfo } from './members.js';

export type Phase = 'joining' | 'running' | 'finished' | 'failed';

/** What the coordinator provides to its membership. */
export interface MembershipHooks {
  phase(): Phase;
  /** Every rank has wired its ring and said so: from then on a silent member counts as lost. Before, a
   *  rank may be busy for seconds making its initial weights; a dead one is caught by its closed socket or
   *  the ring set-up's deadline. */
  wired(): boolean;
  fail(err: CoordinatorError): void; // the run fails now, with this verdict
  failSoon(err: CoordinatorError): void; // ... after a moment, unless a better culprit turns up
  message(m: Member, msg: ControlMessage): void;
  joined(info: RankInfo): void;
  joinedSocket(socket: Socket): void; // off the strangers' deadline
  refused(from: string, why: string): void;
  progress(): void;
  where(m: Member): string;
}

export class Membership {
  readonly members: Member[] = [];
  private messageCap: number;

  constructor(
    private readonly admission: Omit<AdmissionState, 'phase' | 'members'>,
    joinMessageBytes: number,
    private readonly heartbeatTimeoutMs: number | undefined,
    private readonly hooks: MembershipHooks,
  ) {
    this.messageCap = joinMessageBytes;
  }

  /** From now on a member may send messages of up to `bytes` (message-caps.ts). */
  capMessages(bytes: number): void {
    this.messageCap = bytes;
    for (const m of this.members) limitMessages(m.ws, bytes);
  }

  /** The largest message any member sent, and the cap. */
  get messages(): { largest: number; cap: number } {
    return { largest: Math.max(0, ...this.members.map((m) => m.largestMessage)), cap: this.messageCap };
  }

  stopWatching(): void {
    for (const m of this.members) m.liveness.stop();
  }

  onConnection(ws: WebSocket, req: IncomingMessage): void {
    const from = plainAddress(req);
    let member: Member | null = null;
    // Every refusal is told to the operator: who, and why (never what they sent).
    const refuse = (reason: string) => {
      this.hooks.refused(from, reason);
      ws.close(1008, closeReason(reason));
    };
    ws.on('message', (data, isBinary) => {
      let msg: ControlMessage;
      try {
        if (!isBinary) throw new Error('text message');
        msg = decodeControl(data as Buffer);
      } catch (err) {
        // Before the run starts a malformed member is only dropped (a stranger's garbage must not end a run
        // that has not begun); once it runs, it fails the run.
        if (member && this.hooks.phase() === 'running')
          this.hooks.fail(new CoordinatorError(`${this.hooks.where(member)} sent a malformed message: ${(err as Error).message}`));
        return refuse(`malformed message: ${(err as Error).message}`);
      }
      if (!member) {
        if (msg.type !== 'join') return refuse('the first message must be a join');
        const why = joinRefusal(msg, from, { ...this.admission, phase: this.hooks.phase(), members: this.members.map((m) => m.info) });
        if (why) return refuse(why);
        member = this.admit(ws, req, msg, from);
        return;
      }
      member.liveness.heard();
      member.largestMessage = Math.max(member.largestMessage, (data as Buffer).byteLength);
      this.hooks.message(member, msg);
    });
    ws.on('close', (code, reason) => member && this.onClose(member, code, reason.toString()));
    // 'close' follows and says what matters for a member, except a message over its cap, which ws refuses
    // at the frame header: that is the verdict, with its size. A stranger's error is reported.
    ws.on('error', (err) => {
      if (!member) return this.hooks.refused(from, err.message);
      if ((err as { code?: string }).code !== 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return;
      const size = announcedBytes(ws) ?? 'more than the limit of';
      this.hooks.fail(
        new CoordinatorError(
          `${this.hooks.where(member)} sent a message of ${size} bytes, over the limit of ${this.messageCap} bytes a rank may send in this run (refused unread)`,
        ),
      );
    });
  }

  /** A join that passed admission: a member from now on, watched for liveness. */
  private admit(ws: WebSocket, req: IncomingMessage, join: Extract<ControlMessage, { type: 'join' }>, from: string): Member {
    const info: RankInfo = {
      rank: this.members.length,
      address: join.advertise ?? from,
      peerPort: join.peerPort,
      host: join.host ?? join.advertise ?? from,
      requested: join.rankId,
      worldSize: join.worldSize,
      hostname: join.hostname,
      pid: join.pid,
      from,
    };
    const m: Member = { ws, info, liveness: this.watch(ws, () => m), aborted: null, suspect: null, largestMessage: 0 };
    m.liveness.start();
    // Joined: no longer a stranger on a deadline. Its messages stay join-sized until the run starts and
    // its largest real message is known (run).
    this.hooks.joinedSocket(req.socket);
    ws.on('pong', () => m.liveness.heard());
    ws.on('ping', () => m.liveness.heard());
    this.members.push(m);
    this.hooks.joined(info);
    this.hooks.progress();
    return m;
  }

  private onClose(member: Member, code: number, reason: string): void {
    member.liveness.stop();
    if (this.hooks.phase() === 'joining') {
      // Left before the run started: forget it and renumber, so nobody waits for a ghost.
      this.members.splice(this.members.indexOf(member), 1);
      this.members.forEach((m, i) => (m.info.rank = i));
      return;
    }
    if (this.hooks.phase() !== 'running') return;
    // A rank that said why it stops closes right after; its reason stands, on the same footing as any
    // other rank's (see failSoon). A rank that vanished without a word is the culprit at once.
    if (member.aborted) this.hooks.failSoon(member.aborted);
    else this.hooks.fail(new CoordinatorError(`${this.hooks.where(member)} disconnected (${code}${reason.length ? ` ${reason}` : ''})`));
  }

  /** Watch a member: pinged, and heard from; one silent past the limit while the run runs is lost (a dead
   *  host or a cut cable sends no FIN). */
  private watch(ws: WebSocket, member: () => Member): Liveness {
    const timing = this.heartbeatTimeoutMs === undefined ? LIVENESS : livenessFor(this.heartbeatTimeoutMs);
    return new Liveness(timing, {
      socket: () => socketOf(ws),
      ping: () => ws.readyState === ws.OPEN && ws.ping(),
      armed: () => this.hooks.phase() === 'running' && this.hooks.wired(),
      lost: (silent, limit) => {
        this.hooks.fail(new CoordinatorError(`${this.hooks.where(member())} stopped answering heartbeats (silent for ${silent} ms, limit ${limit} ms)`));
        ws.terminate();
      },
    });
  }
}
