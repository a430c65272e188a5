import type { MessagePort } from 'node:worker_threads';
import type { UserOperatorInfo } from './job-user-code.js';

/**
 * Messages between a JobMaster and the worker thread that runs one job's user code. A call names
 * a handle (0: the worker's runtime; others: a source coordinator or coordinator holder it
 * created) and one of its methods. Everything is structured-cloned.
 */
export interface UserCodeCall {
  readonly id: number;
  readonly handle: number;
  readonly method: string;
  readonly args: readonly unknown[];
}

export type UserCodeReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly code: string; readonly message: string };

/** From the worker on its parent port: replies to asynchronous calls, log lines, heartbeats. */
export type UserCodeEvent =
  | { readonly kind: 'reply'; readonly reply: UserCodeReply }
  | { readonly kind: 'log'; readonly line: string }
  /** User code called process.exit(): the reason the job fails, sent before the thread ends. */
  | { readonly kind: 'exiting'; readonly reason: string }
  | { readonly kind: 'pong' };

/** To the worker on its parent port. */
export type UserCodeCommand = { readonly kind: 'call'; readonly call: UserCodeCall } | { readonly kind: 'ping' };

/** What a worker starts with. */
export interface UserCodeWorkerData {
  readonly modulePath: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  /** The JobMaster's log level: lines below it are not even sent. */
  readonly logLevel: string;
  /** Synchronous calls: the worker answers on this port and then wakes the caller through `syncFlag`. */
  readonly syncPort: MessagePort;
  /** One Int32: 0 while a synchronous call runs, 1 once its reply is on `syncPort`. */
  readonly syncFlag: SharedArrayBuffer;
}

/** The runtime's `load` reply: the job module's operators. */
export interface LoadedJob {
  readonly operators: readonly UserOperatorInfo[];
}

/** The id of a synchronous reply that answers no call: the worker is exiting in the middle of one. */
export const EXITING_REPLY = -1;

/** Handle 0: the worker's runtime. */
export const RUNTIME_HANDLE = 0;
