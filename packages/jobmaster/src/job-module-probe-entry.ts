// Runs inside the probe's worker thread (bundled by JobModuleProbe): loads the job module and
// builds its operators once, the way the JobMaster is about to, and says how that went.
import { parentPort, workerData } from 'node:worker_threads';
import { buildOperators, loadJobModule } from '@rebound/api';

interface ProbeRequest {
  readonly modulePath: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
}

const req = workerData as ProbeRequest;
try {
  const def = await loadJobModule(req.modulePath);
  await buildOperators(def, [...req.args], { cwd: req.cwd });
  parentPort?.postMessage({ ok: true });
} catch (err) {
  parentPort?.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
}
