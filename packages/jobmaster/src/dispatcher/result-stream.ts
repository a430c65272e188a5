import type * as grpc from '@grpc/grpc-js';
import { errorMessage, ReboundError, toServiceError } from '@rebound/core';
import type { FetchJobResultRequest__Output, JobResultChunk, Logger } from '@rebound/core';

type Call = grpc.ServerWritableStream<FetchJobResultRequest__Output, JobResultChunk>;

/** Resolves when the call takes more data, or when it is over (cancelled, closed, past its deadline). */
function writable(call: Call, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    call.on('drain', done);
    call.on('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The FetchJobResult handler: writes the chunks `open` yields, reading the next one only once
 * gRPC took the previous (a slow client holds the leader to one chunk), and stops reading when
 * the client cancels or its deadline passes. Whatever `open` or a read throws (no leader, bad job
 * id, bad position) ends the call with one status, and anything but a ReboundError with an error
 * line too; nothing escapes the handler.
 */
export function handleResultStream(
  open: (req: FetchJobResultRequest__Output) => Promise<AsyncGenerator<JobResultChunk>>,
  logger: Logger,
): grpc.handleServerStreamingCall<FetchJobResultRequest__Output, JobResultChunk> {
  return (call) => {
    const ac = new AbortController();
    const onCancel = (): void => ac.abort();
    call.on('cancelled', onCancel);
    void (async () => {
      let chunks: AsyncGenerator<JobResultChunk> | undefined;
      try {
        chunks = await open(call.request);
        for await (const chunk of chunks) {
          if (ac.signal.aborted) break;
          if (!call.write(chunk)) await writable(call, ac.signal);
          if (ac.signal.aborted) break;
        }
        if (!ac.signal.aborted) call.end();
      } catch (err) {
        // A ReboundError is an answer (no leader, bad position); anything else is a bug to see.
        if (err instanceof ReboundError)
          logger.debug({ jobId: call.request.job_id, err: errorMessage(err) }, 'FetchJobResult failed');
        else logger.error({ method: call.getPath(), err }, 'gRPC handler failed');
        if (!ac.signal.aborted) call.emit('error', toServiceError(err));
      } finally {
        call.off('cancelled', onCancel);
        await chunks?.return(undefined).catch(() => undefined);
      }
    })();
  };
}
