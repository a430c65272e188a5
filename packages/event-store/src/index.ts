export * from './job-event.js';
export * from './job-event-store.js';
export * from './file-system-job-event-store.js';
export * from './job-event-manager.js';
export * from './job-event-log-reader.js';
export * from './replay-report.js';
export * from './dump.js';
export * from './errors.js';
export * from './options.js';
export * from './flush-timer.js';
export {
  FILE_FORMAT_VERSION,
  PAYLOAD_VERSION,
  EVENT_FILE_PREFIX,
  eventFileName,
  jobEventsDir,
  listEventFiles,
  type EventFileRef,
} from './format.js';
export { observeEventStores, type EventStoreObserver } from './metrics.js';
