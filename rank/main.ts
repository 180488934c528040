// `zerowire rank`: join a coordinator and train until it says the run is over.
import type { Logger } from 'pino';
import { RankSession, type RankOptions } from './session.js';

/** Resolves with the process exit code. */
export async function runRank(opts: RankOptions, log: Logger): Promise<number> {
  const session = new RankSession(opts, log);
  let signalled: string | null = null;
  const stop = (sig: string) => {
    signalled = sig;
    void session.close();
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  try {
    await session.run();
    log.info('run finished');
    return 0;
  } catch (err) {
    log.error(signalled ? `stopped by ${signalled}` : (err as Error).message);
    return signalled === 'SIGTERM' ? 143 : signalled ? 130 : 1;
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
    await session.close();
  }
}
