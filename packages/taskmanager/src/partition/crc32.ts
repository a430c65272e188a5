import * as zlib from 'node:zlib';

type Crc32 = (data: Uint8Array, value?: number) => number;

let table: Uint32Array | undefined;

function tableCrc32(data: Uint8Array, value = 0): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = (value ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// zlib.crc32 (native, fast) exists from Node 20.15 / 22.2; the engines field allows older 20.x.
const native = (zlib as unknown as { crc32?: Crc32 }).crc32;

/** CRC-32 (IEEE, as zlib/gzip) of `data`. */
export const crc32: Crc32 = typeof native === 'function' ? (data, value) => native(data, value) >>> 0 : tableCrc32;

export { tableCrc32 as crc32Portable };
