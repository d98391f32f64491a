// Uncompressed baseline TIFF files written byte by byte, for the sample formats sharp cannot write
// (its TIFF output is always 8 or 16-bit): 32-bit integers, signed integers, floats and doubles,
// 1-bit bilevel.

export type SampleFormat = 'uint' | 'int' | 'float';

export interface TiffSamples {
  width: number;
  height: number;
  /** 1 grey, 2 grey and alpha, 3 RGB, 4 RGB and alpha (unassociated); with `cmyk`, 4 CMYK, 5 CMYK and alpha. */
  channels: 1 | 2 | 3 | 4 | 5;
  bits: 1 | 8 | 16 | 32 | 64;
  format: SampleFormat;
  /** Interleaved samples as numbers, `width × height × channels` of them; 0 or 1 when `bits` is 1. */
  samples: ArrayLike<number>;
  /** An ICC profile to embed. */
  icc?: Buffer;
  /** CIELAB (photometric 8) instead of grey or RGB: 3 channels, L then a and b (signed, as two's complement when integers). */
  cielab?: boolean;
  /** CMYK (photometric 5, ink set 1), 0 as no ink. */
  cmyk?: boolean;
  /** ExtraSamples values for the channels beyond the colours (2: unassociated alpha, 0: unspecified), instead of one alpha where there is one. */
  extraSamples?: number[];
}

const sampleFormatCode: Record<SampleFormat, number> = { uint: 1, int: 2, float: 3 };

const short = 3;
const long = 4;
const undefinedType = 7;

export function tiffOf({ width, height, channels, bits, format, samples, icc, cielab, cmyk, extraSamples }: TiffSamples): Buffer {
  const pixels = bits === 1 ? bilevel(width, height, samples) : packed(bits, format, samples);
  const colour = channels >= 3;
  const entries: [tag: number, type: number, values: number[] | Buffer][] = [
    [256, long, [width]],
    [257, long, [height]],
    [258, short, Array<number>(channels).fill(bits)],
    [259, short, [1]], // no compression
    [262, short, [cielab ? 8 : cmyk ? 5 : colour ? 2 : 1]], // CIELAB, CMYK, RGB, or grey with 0 as black
    [273, long, [0]], // strip offset, set below
    [277, short, [channels]],
    [278, long, [height]],
    [279, long, [pixels.length]],
    [284, short, [1]], // interleaved
  ];
  if (cmyk) entries.push([332, short, [1]]); // ink set: CMYK
  if (extraSamples) entries.push([338, short, extraSamples]);
  else if (channels === 2 || channels === (cmyk ? 5 : 4)) entries.push([338, short, [2]]); // unassociated alpha
  entries.push([339, short, Array<number>(channels).fill(sampleFormatCode[format])]);
  if (icc) entries.push([34675, undefinedType, icc]);

  // Little-endian header, the one IFD at offset 8, then values too long for their entry, then the strip.
  const ifd = Buffer.alloc(2 + entries.length * 12 + 4);
  const outside: Buffer[] = [];
  let next = 8 + ifd.length;
  ifd.writeUInt16LE(entries.length, 0);
  entries.forEach(([tag, type, values], i) => {
    const at = 2 + i * 12;
    const body = Buffer.isBuffer(values) ? values : encode(values, type);
    ifd.writeUInt16LE(tag, at);
    ifd.writeUInt16LE(type, at + 2);
    ifd.writeUInt32LE(values.length, at + 4);
    if (body.length <= 4) {
      body.copy(ifd, at + 8);
    } else {
      ifd.writeUInt32LE(next, at + 8);
      const aligned = Buffer.concat([body, Buffer.alloc(body.length % 2)]);
      outside.push(aligned);
      next += aligned.length;
    }
  });
  const stripOffset = 2 + entries.findIndex(([tag]) => tag === 273) * 12 + 8;
  ifd.writeUInt32LE(next, stripOffset);
  return Buffer.concat([Buffer.from([0x49, 0x49, 42, 0, 8, 0, 0, 0]), ifd, ...outside, pixels]);
}

function encode(values: number[], type: number): Buffer {
  const size = type === short ? 2 : 4;
  const b = Buffer.alloc(values.length * size);
  values.forEach((v, i) => (size === 2 ? b.writeUInt16LE(v, i * 2) : b.writeUInt32LE(v, i * 4)));
  return b;
}

function packed(bits: number, format: SampleFormat, samples: ArrayLike<number>): Buffer {
  const size = bits / 8;
  const b = Buffer.alloc(samples.length * size);
  const write = writer(bits, format);
  for (let i = 0; i < samples.length; i++) write(b, samples[i]!, i * size);
  return b;
}

function writer(bits: number, format: SampleFormat): (b: Buffer, value: number, at: number) => void {
  const key = `${format}${bits}`;
  switch (key) {
    case 'uint8': return (b, v, at) => b.writeUInt8(v, at);
    case 'int8': return (b, v, at) => b.writeInt8(v, at);
    case 'uint16': return (b, v, at) => b.writeUInt16LE(v, at);
    case 'int16': return (b, v, at) => b.writeInt16LE(v, at);
    case 'uint32': return (b, v, at) => b.writeUInt32LE(v, at);
    case 'int32': return (b, v, at) => b.writeInt32LE(v, at);
    case 'float32': return (b, v, at) => b.writeFloatLE(v, at);
    case 'float64': return (b, v, at) => b.writeDoubleLE(v, at);
    default: throw new Error(`no ${bits}-bit ${format} samples in TIFF`);
  }
}

// One bit a sample, most significant first, each row starting on a byte.
function bilevel(width: number, height: number, samples: ArrayLike<number>): Buffer {
  const rowBytes = Math.ceil(width / 8);
  const b = Buffer.alloc(rowBytes * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) if (samples[y * width + x]) b[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
  }
  return b;
}
