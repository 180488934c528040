// `zerowire rank`: join a coordinator and train until it says the run is over.
import type { Logger } from 'pino';
import { BIND_EXIT_CODE, BindError } from '../shared/transport/bind-error.js';
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
    if (signalled) return signalled === 'SIGTERM' ? 143 : 130;
    return err instanceof BindError ? BIND_EXIT_CODE : 1;
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
    await session.close();
  }
}
