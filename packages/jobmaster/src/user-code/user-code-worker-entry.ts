// Runs inside a job's user-code worker thread (built into packages/jobmaster/dist by
// scripts/build.mjs): loads the job module, builds its operators and hosts its split enumerators
// and operator coordinators, answering the JobMaster's calls. Whatever the user code does here (exit, throw from a timer, loop, allocate)
// ends this thread at most.
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { IllegalStateError, ReboundError, errorMessage } from '@rebound/core';
import { buildOperators, loadJobModule } from '@rebound/api';
import { InProcessUserCode } from './in-process-user-code.js';
import type { CoordinatorHolderSpec } from './job-user-code.js';
import {
  EXITING_REPLY,
  type LoadedJob,
  type UserCodeCall,
  type UserCodeCommand,
  type UserCodeEvent,
  type UserCodeReply,
  type UserCodeWorkerData,
} from './user-code-protocol.js';

const data = workerData as UserCodeWorkerData;
const port = parentPort!;
const post = (e: UserCodeEvent): void => port.postMessage(e);
// The JobMaster writes these lines to its own log, with the job's fields.
const logger = pino(
  { level: data.logLevel, base: undefined, timestamp: false },
  { write: (line: string) => post({ kind: 'log', line }) },
);
const handles = new Map<number, object>();
let nextHandle = 1;
let userCode: InProcessUserCode | undefined;

function loaded(): InProcessUserCode {
  if (!userCode) throw new IllegalStateError('the job module is not loaded yet');
  return userCode;
}

function register(target: object): number {
  const handle = nextHandle++;
  handles.set(handle, target);
  return handle;
}

const runtime = {
  async load(): Promise<LoadedJob> {
    const def = await loadJobModule(data.modulePath);
    const operators = await buildOperators(def, [...data.args], { cwd: data.cwd });
    const code = new InProcessUserCode(operators, logger);
    userCode = code;
    return { operators: [...operators.keys()].map((id) => code.operator(id)!) };
  },
  estimateSplits: (operatorId: string) => loaded().estimateSplits(operatorId),
  createSource: (operatorId: string, vertexName: string, parallelism: number) =>
    register(loaded().createSourceCoordinator(operatorId, vertexName, parallelism)),
  createHolder: (spec: CoordinatorHolderSpec) => register(loaded().createCoordinatorHolder(spec)),
};

function invoke(call: UserCodeCall): unknown {
  const target: object | undefined = call.handle === 0 ? runtime : handles.get(call.handle);
  const fn = target && (target as Record<string, unknown>)[call.method];
  if (typeof fn !== 'function') throw new IllegalStateError(`no method ${call.method} on handle ${call.handle}`);
  return (fn as (...args: unknown[]) => unknown).apply(target, [...call.args]);
}

function failed(id: number, err: unknown): UserCodeReply {
  const code = err instanceof ReboundError ? err.code : 'USER_CODE';
  return { id, ok: false, code, message: errorMessage(err) };
}

port.on('message', (cmd: UserCodeCommand) => {
  if (cmd.kind === 'ping') return post({ kind: 'pong' });
  const { call } = cmd;
  void (async () => {
    let reply: UserCodeReply;
    try {
      reply = { id: call.id, ok: true, value: await invoke(call) };
    } catch (err) {
      reply = failed(call.id, err);
    }
    post({ kind: 'reply', reply });
  })();
});

const flag = new Int32Array(data.syncFlag);
let inSyncCall = false;

function answerSync(reply: UserCodeReply): void {
  data.syncPort.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

/** Ends this worker (never the process) after saying why, so that the job fails with it. */
function endWorker(reason: string, code: number | string | null | undefined): never {
  post({ kind: 'exiting', reason });
  if (inSyncCall) answerSync({ id: EXITING_REPLY, ok: false, code: 'USER_CODE', message: reason });
  return exit(code);
}

// process.exit() in a worker ends only the worker. process.abort() and a signal to this very
// process would end the JobMaster: a careless job gets the worker's end instead. (A kill through
// another process, or a native crash, still gets through: the load quarantine is for those.)
const exit = process.exit.bind(process);
const kill = process.kill.bind(process);
process.exit = ((code?: number | string | null) =>
  endWorker(`called process.exit(${code ?? ''})`, code)) as typeof process.exit;
process.abort = (() => endWorker('called process.abort()', 134)) as typeof process.abort;
process.kill = ((pid: number, signal?: string | number) => {
  if (pid === process.pid || pid === 0)
    return endWorker(`called process.kill(its own process, ${String(signal ?? 'SIGTERM')})`, 1);
  return kill(pid, signal);
}) as typeof process.kill;

data.syncPort.on('message', (call: UserCodeCall) => {
  let reply: UserCodeReply;
  inSyncCall = true;
  try {
    const value = invoke(call);
    if (value instanceof Promise) {
      value.catch(() => undefined);
      throw new IllegalStateError(`${call.method} answered asynchronously to a synchronous call`);
    }
    reply = { id: call.id, ok: true, value };
  } catch (err) {
    reply = failed(call.id, err);
  }
  inSyncCall = false;
  answerSync(reply);
});
