export { startTaskManagerProcess } from './taskmanager-process.js';
export type { TaskManagerProcess, TaskManagerProcessOptions } from './taskmanager-process.js';
