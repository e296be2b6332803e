// Minimal NumPy .npy reader/writer (format 1.0, little-endian, C order) so the reference
// scripts need no npm package beyond onnxruntime-node.
import fs from 'node:fs';
import path from 'node:path';

// dtype name (as onnxruntime-node spells it) <-> npy descr and typed-array constructor.
const kTypes = {
  float32: { descr: '<f4', array: Float32Array },
  float64: { descr: '<f8', array: Float64Array },
  float16: { descr: '<f2', array: Uint16Array },  // raw IEEE half bits, as onnxruntime-node holds them
  int8: { descr: '|i1', array: Int8Array },
  uint8: { descr: '|u1', array: Uint8Array },
  int16: { descr: '<i2', array: Int16Array },
  uint16: { descr: '<u2', array: Uint16Array },
  int32: { descr: '<i4', array: Int32Array },
  uint32: { descr: '<u4', array: Uint32Array },
  int64: { descr: '<i8', array: BigInt64Array },
  uint64: { descr: '<u8', array: BigUint64Array },
  bool: { descr: '|b1', array: Uint8Array },
};

function typeForDescr(descr) {
  const normal = descr.replace(/^=/, '<');
  for (const [name, info] of Object.entries(kTypes)) {
    if (info.descr === normal || info.descr.replace('|', '<') === normal) return name;
  }
  throw new Error(`unsupported npy dtype '${descr}'`);
}

// Encodes { type, dims, data } as .npy bytes.
export function encodeNpy({ type, dims, data }) {
  const info = kTypes[type];
  if (!info) throw new Error(`unsupported dtype '${type}'`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${info.descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Magic (6) + version (2) + length (2) + header + '\n' must be a multiple of 64.
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(prefix, 0);
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const typed = data instanceof info.array ? data : info.array.from(data);
  const body = Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength);
  return Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]);
}

// Decodes .npy bytes into { type, dims, data } (data is a typed array; bool as Uint8Array).
export function decodeNpy(bytes) {
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error('not an npy file');
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw new Error(`bad npy header: ${header}`);
  if (fortran === 'True') throw new Error('fortran-order npy is not supported');
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const type = typeForDescr(descr);
  const count = dims.reduce((a, b) => a * b, 1);
  const ctor = kTypes[type].array;
  const start = headerStart + headerLength;
  // Copy so the typed array is aligned regardless of the header length.
  const body = new Uint8Array(bytes.subarray(start, start + count * ctor.BYTES_PER_ELEMENT));
  return { type, dims, data: new ctor(body.buffer, 0, count) };
}

// Writes atomically: temp file in the same folder, then rename.
export function writeNpy(file, tensor) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp${process.pid}`;
  fs.writeFileSync(tmp, encodeNpy(tensor));
  fs.renameSync(tmp, file);
}

export function readNpy(file) {
  return decodeNpy(fs.readFileSync(file));
}
