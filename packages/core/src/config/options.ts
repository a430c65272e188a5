import { DEBUG_OPTIONS, DEBUG_RANGES } from './options-debug.js';
import { HA_OPTIONS, HA_RANGES } from './options-ha.js';
import { JOB_OPTIONS, JOB_RANGES } from './options-jobs.js';
import { PROCESS_OPTIONS, PROCESS_RANGES } from './options-processes.js';
import { RECOVERY_OPTIONS, RECOVERY_RANGES } from './options-recovery.js';
import { REST_OPTIONS, REST_RANGES } from './options-rest.js';
import { SECURITY_OPTIONS, SECURITY_RANGES } from './options-security.js';
import { SHUFFLE_OPTIONS, SHUFFLE_RANGES } from './options-shuffle.js';
import type { NumericKeyOf, OptionSpec, Range } from './option-spec.js';

/**
 * Every configuration key the cluster knows, with Flink's names and defaults where Flink has the
 * same option. Anything else is rejected with the key named. A key is added in its area's file
 * (options-*.ts), with its range there if it is numeric; nothing here changes.
 */
export const OPTIONS = {
  ...RECOVERY_OPTIONS,
  ...JOB_OPTIONS,
  ...PROCESS_OPTIONS,
  ...HA_OPTIONS,
  ...REST_OPTIONS,
  ...SECURITY_OPTIONS,
  ...SHUFFLE_OPTIONS,
  ...DEBUG_OPTIONS,
} as const satisfies Record<string, OptionSpec>;

export type ConfigKey = keyof typeof OPTIONS;

/** The tables OPTIONS is made of, so a test can tell that no two areas declare one key. */
export const OPTION_AREAS: readonly Readonly<Record<string, OptionSpec>>[] = [
  RECOVERY_OPTIONS,
  JOB_OPTIONS,
  PROCESS_OPTIONS,
  HA_OPTIONS,
  REST_OPTIONS,
  SECURITY_OPTIONS,
  SHUFFLE_OPTIONS,
  DEBUG_OPTIONS,
];

/**
 * The accepted range of every numeric key, in the key's own unit (ms, bytes or a count). A value
 * outside it is refused with the key and the range named: 0 where 0 would disable a safety
 * (heartbeats, deadlines) is out of range, not "off".
 */
export const RANGES: Readonly<Record<NumericKeyOf<typeof OPTIONS>, Range>> = {
  ...RECOVERY_RANGES,
  ...JOB_RANGES,
  ...PROCESS_RANGES,
  ...HA_RANGES,
  ...REST_RANGES,
  ...SECURITY_RANGES,
  ...SHUFFLE_RANGES,
  ...DEBUG_RANGES,
};
