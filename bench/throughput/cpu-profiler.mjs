// Preloaded into the cluster daemons by `run.ts --profile DIR` (Node 20 refuses --cpu-prof in
// NODE_OPTIONS): samples the whole process with the inspector's Profiler and writes a
// .cpuprofile (Chrome DevTools format) into $REBOUND_BENCH_PROFILE_DIR when the process exits.
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.REBOUND_BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  const role = process.argv.slice(2).find((a) => !a.startsWith('-')) ?? 'node';
  // An in-thread session answers synchronously, so this works inside the 'exit' handler.
  process.on('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(join(dir, `${role}-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
