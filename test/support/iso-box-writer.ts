// Writing ISO base media file format boxes (HEIF, AVIF) for tests that put such files together by hand.

export function box(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(body.length + 8);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

export function fullBox(type: string, version: number, ...parts: Buffer[]): Buffer {
  return box(type, u32(version << 24), ...parts);
}

export function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}

export function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value >>> 0);
  return b;
}

export const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');
