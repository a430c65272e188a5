/**
 * What the answer of GetAndRetainPartitionsWithMetrics costs to encode (on a TaskManager) and
 * decode (on the new leader) through the gRPC service's own proto-loader codec, with and without
 * the per-subpartition byte counts. Wall and CPU time (CPU is robust to other load).
 *
 *   npx tsx bench/recovery/partition-rpc-codec.ts [--partitions 3334] [--subpartitions 128] [--runs 5]
 *
 * 3,334 partitions is one TaskManager's share of 10,000 finished executions over three.
 */
import { parseArgs } from 'node:util';
import { loadProto, type GetPartitionsResponse, type GetPartitionsResponse__Output } from '@rebound/core';

const { values } = parseArgs({
  options: {
    partitions: { type: 'string', default: '3334' },
    subpartitions: { type: 'string', default: '128' },
    runs: { type: 'string', default: '5' },
  },
  strict: true,
});
const n = Number(values.partitions);
const subpartitions = Number(values.subpartitions);
const runs = Number(values.runs);

interface MethodCodec {
  responseSerialize(value: GetPartitionsResponse): Buffer;
  responseDeserialize(bytes: Buffer): GetPartitionsResponse__Output;
}
const codec = (loadProto().TaskExecutorGateway as unknown as { service: { GetAndRetainPartitionsWithMetrics: MethodCodec } }).service
  .GetAndRetainPartitionsWithMetrics;

function response(withBytes: boolean): GetPartitionsResponse {
  return {
    partitions: Array.from({ length: n }, (_, s) => ({
      partition_id: { job_id: '0123456789abcdef0123456789abcdef', vertex_id: 'v-op-1', subtask: s, attempt: 0 },
      num_subpartitions: subpartitions,
      subpartition_bytes: withBytes ? Array.from({ length: subpartitions }, (_, k) => 2_000 + ((s * 7919 + k * 104_729) % 20_000)) : [],
    })),
  };
}

const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;
const rows = [];
for (const withBytes of [true, false]) {
  const msg = response(withBytes);
  for (let r = 0; r < runs; r++) {
    let c = process.cpuUsage();
    let t = performance.now();
    const bytes = codec.responseSerialize(msg);
    const encodeMs = performance.now() - t;
    const encodeCpuMs = cpuMs(process.cpuUsage(c));
    c = process.cpuUsage();
    t = performance.now();
    const decoded = codec.responseDeserialize(bytes);
    const decodeMs = performance.now() - t;
    const decodeCpuMs = cpuMs(process.cpuUsage(c));
    if (decoded.partitions.length !== n) throw new Error('decoded the wrong number of partitions');
    rows.push({
      'subpartition bytes': withBytes ? 'sent' : 'not sent',
      run: r + 1,
      'message KB': Math.round(bytes.length / 1024),
      'encode ms': Math.round(encodeMs),
      'encode CPU ms': Math.round(encodeCpuMs),
      'decode ms': Math.round(decodeMs),
      'decode CPU ms': Math.round(decodeCpuMs),
    });
  }
}
console.log(`GetPartitionsResponse of ${n} partitions x ${subpartitions} subpartitions (proto-loader codec of the gRPC service):`);
console.table(rows);
