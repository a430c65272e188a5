import { JOB_EVENT_TYPE_NAMES } from '../job-event-types.js';
import { type OptionSpec, type RangesOf } from './option-spec.js';

// Crash points for tests and the chaos harness (test-only unless debug.allow-test-options).

/** `<EventType>:<N>` with N >= 1: the Nth event of that type this JobMaster process writes. */
function checkEventCrashPoint(value: string): string | undefined {
  const m = /^([A-Za-z]+):(\d+)$/.exec(value.trim());
  if (!m) return `'${value}' is not <EventType>:<N>, e.g. ExecutionVertexFinished:3`;
  if (!(JOB_EVENT_TYPE_NAMES as readonly string[]).includes(m[1]!)) {
    return `unknown event type '${m[1]}'; it can never trigger: use one of ${JOB_EVENT_TYPE_NAMES.join(', ')}`;
  }
  if (Number(m[2]) < 1) return `N must be at least 1 in '${value}'`;
  return undefined;
}

export const DEBUG_OPTIONS = {
  'debug.allow-test-options': {
    kind: 'boolean',
    default: 'false',
    description: 'Allow the debug.* crash points used by tests and the chaos harness.',
  },
  'debug.crash.before-event': {
    kind: 'string',
    default: '',
    testOnly: true,
    check: checkEventCrashPoint,
    description:
      'Test only: the JobMaster exits abruptly (like SIGKILL) just before it writes the Nth event of a type: <EventType>:<N>.',
  },
  'debug.crash.after-event': {
    kind: 'string',
    default: '',
    testOnly: true,
    check: checkEventCrashPoint,
    description:
      'Test only: the JobMaster exits abruptly just after the Nth event of a type is durable: <EventType>:<N>.',
  },
  'debug.crash.after-deploy': {
    kind: 'int',
    default: '0',
    testOnly: true,
    description: 'Test only: the JobMaster exits abruptly just after it deploys its Nth task (0: never).',
  },
  'debug.crash.in-commit': {
    kind: 'int',
    default: '-1',
    testOnly: true,
    description:
      'Test only: the JobMaster exits abruptly inside the sink commit, once the commit manifest is saved and N sink files are renamed (-1: never).',
  },
  'debug.crash.during-reconciling': {
    kind: 'boolean',
    default: 'false',
    testOnly: true,
    description: 'Test only: the JobMaster exits abruptly in RECONCILING, after replay and before reconciliation.',
  },
} as const satisfies Record<string, OptionSpec>;

export const DEBUG_RANGES: RangesOf<typeof DEBUG_OPTIONS> = {
  'debug.crash.after-deploy': { min: 0, max: 1_000_000 },
  'debug.crash.in-commit': { min: -1, max: 1_000_000 },
};
