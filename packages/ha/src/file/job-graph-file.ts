import {
  crc32c,
  decodeMessage,
  encodeMessage,
  type JobGraph,
  type JobGraph__Output,
  JobInvalidError,
  ReboundError,
} from '@rebound/core';

/**
 * `jobgraph.pb`: the JobGraph in protobuf binary behind a small frame, because protobuf itself
 * cannot tell a damaged message from a shorter one (a file cut at a field boundary decodes, to a
 * smaller graph). The frame is magic `RBJG`, a version byte, the payload's length and its CRC-32C
 * (both uint32 little-endian), then the payload. Files written before the frame existed (no
 * magic) are decoded as they are, and the store still checks that they name their job.
 */
const MAGIC = Buffer.from('RBJG', 'latin1');
const VERSION = 1;
const HEADER = MAGIC.length + 1 + 4 + 4;

export function encodeJobGraphFile(graph: JobGraph): Buffer {
  const payload = encodeMessage('JobGraph', graph);
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header, 0);
  header.writeUInt8(VERSION, MAGIC.length);
  header.writeUInt32LE(payload.length, MAGIC.length + 1);
  header.writeUInt32LE(crc32c(payload), MAGIC.length + 5);
  return Buffer.concat([header, payload]);
}

/** The graph in `bytes`; a ReboundError(JOB_INVALID) naming `path` when the frame or the message is damaged. */
export function decodeJobGraphFile(bytes: Buffer, path: string): JobGraph__Output {
  let payload: Uint8Array = bytes;
  const head = Math.min(bytes.length, MAGIC.length);
  if (head > 0 && head < MAGIC.length && bytes.subarray(0, head).equals(MAGIC.subarray(0, head)))
    throw damaged(path, `torn inside its header (${bytes.length} of ${HEADER} bytes)`);
  if (head === MAGIC.length && bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    if (bytes.length < HEADER) throw damaged(path, `torn inside its header (${bytes.length} of ${HEADER} bytes)`);
    const version = bytes.readUInt8(MAGIC.length);
    if (version !== VERSION)
      throw damaged(
        path,
        `frame version ${version}, this build reads ${VERSION}: written by a newer Rebound, or damaged`,
      );
    const length = bytes.readUInt32LE(MAGIC.length + 1);
    if (bytes.length - HEADER !== length)
      throw damaged(path, `torn: the frame says ${length} bytes of graph, the file has ${bytes.length - HEADER}`);
    payload = bytes.subarray(HEADER);
    const crc = crc32c(payload);
    if (crc !== bytes.readUInt32LE(MAGIC.length + 5))
      throw damaged(
        path,
        `checksum mismatch (CRC-32C ${crc.toString(16)}, the frame says ${bytes.readUInt32LE(MAGIC.length + 5).toString(16)})`,
      );
  }
  try {
    return decodeMessage<JobGraph__Output>('JobGraph', payload);
  } catch (err) {
    throw damaged(path, (err as Error).message, err);
  }
}

function damaged(path: string, why: string, cause?: unknown): ReboundError {
  return new JobInvalidError(`${path} cannot be decoded: ${why}`, cause === undefined ? undefined : { cause });
}
