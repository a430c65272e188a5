// Loaded into every daemon of a chaos run with partitions (NODE_OPTIONS=--import=<this file>),
// before anything opens a socket: moves the daemon into the cgroup named after its --id under
// $REBOUND_CHAOS_CGROUP, so that nft can drop exactly its traffic by socket cgroup
// (packages/chaos/src/partition.ts). Plain JavaScript: it runs before tsx is registered.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.env.REBOUND_CHAOS_CGROUP;
const args = process.argv.slice(2);
const role = args.find((a) => a === 'jobmaster' || a === 'taskmanager');
const at = args.indexOf('--id');
const id = at >= 0 ? args[at + 1] : undefined;
if (root && role && id && /^[\w.-]+$/.test(id)) {
  const dir = join(root, id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cgroup.procs'), String(process.pid));
}
