import pino from 'pino';

export type Logger = pino.Logger;

export interface LoggerOptions {
  /** Write to this file (appending) instead of stderr. */
  file?: string;
  level?: string;
}

/** One process-wide root logger; components take children with `{component}` bound. */
export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.REBOUND_LOG_LEVEL ?? 'info';
  const dest = options.file
    ? pino.destination({ dest: options.file, sync: true, mkdir: true, append: true })
    : pino.destination({ dest: 2, sync: true });
  return pino({ name, level, base: { pid: process.pid, name } }, dest);
}

/** A logger that discards everything (unit tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
