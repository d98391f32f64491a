// A matrix/TRC ICC profile (v4) for RGB primaries given by their chromaticities and the sRGB tone
// curve: what an image whose colours are only described by code points (an AVIF's nclx) needs so
// that libvips converts it to sRGB like any profiled image. libvips builds in sRGB, Display P3 and
// CMYK profiles but no BT.2020 one, and sharp can only attach a profile by converting the pixels
// into it, so the profile is made here and its bytes embedded by the caller.

type Vector = [number, number, number];
type Matrix = [Vector, Vector, Vector];

/** CIE 1931 xy chromaticities of the red, green and blue primaries and of the white point. */
export interface Chromaticities {
  red: [x: number, y: number];
  green: [x: number, y: number];
  blue: [x: number, y: number];
  white: [x: number, y: number];
}

/** The profile connection space's white, D50, as the ICC specification rounds it. */
const d50: Vector = [0.9642, 1, 0.8249];

/** Bradford's cone response matrix, with which ICC profiles adapt colours to D50. */
const bradford: Matrix = [
  [0.8951, 0.2664, -0.1614],
  [-0.7502, 1.7135, 0.0367],
  [0.0389, -0.0685, 1.0296],
];

/** IEC 61966-2-1 (sRGB) as parametric curve type 3: Y = (aX + b)^g from X = d, Y = cX below. */
const srgbCurve = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045];

export function matrixShaperProfile(description: string, primaries: Chromaticities): Buffer {
  const adaptation = chromaticAdaptation(xyz(primaries.white));
  // Columns: each primary's XYZ at full intensity, adapted to D50 (rXYZ, gXYZ, bXYZ).
  const colorants = multiply(adaptation, rgbToXyz(primaries));
  const curve = tag('para', [u16(3), u16(0), ...srgbCurve.map(s15Fixed16)]);
  const tags: [string, Buffer][] = [
    ['desc', multiLocalised(description)],
    ['wtpt', tag('XYZ ', d50.map(s15Fixed16))],
    ['chad', tag('sf32', adaptation.flat().map(s15Fixed16))],
    ['rXYZ', tag('XYZ ', column(colorants, 0).map(s15Fixed16))],
    ['gXYZ', tag('XYZ ', column(colorants, 1).map(s15Fixed16))],
    ['bXYZ', tag('XYZ ', column(colorants, 2).map(s15Fixed16))],
    ['rTRC', curve],
    ['gTRC', curve],
    ['bTRC', curve],
  ];
  const table = Buffer.alloc(4 + 12 * tags.length);
  table.writeUInt32BE(tags.length, 0);
  const data: Buffer[] = [];
  let offset = 128 + table.length;
  tags.forEach(([signature, body], i) => {
    // The three curves are one and the same: their entries share its bytes.
    const shared = tags.findIndex(([, other]) => other === body);
    const at = shared < i ? table.readUInt32BE(4 + 12 * shared + 4) : offset;
    table.write(signature, 4 + 12 * i, 'latin1');
    table.writeUInt32BE(at, 4 + 12 * i + 4);
    table.writeUInt32BE(body.length, 4 + 12 * i + 8);
    if (shared < i) return;
    const padded = Buffer.alloc((body.length + 3) & ~3);
    body.copy(padded);
    data.push(padded);
    offset += padded.length;
  });
  const header = Buffer.alloc(128);
  header.writeUInt32BE(offset, 0);
  header.writeUInt32BE(0x04300000, 8); // version 4.3
  header.write('mntrRGB XYZ ', 12, 'latin1'); // display class, RGB data, XYZ connection space
  header.write('acsp', 36, 'latin1');
  Buffer.concat(d50.map(s15Fixed16)).copy(header, 68);
  return Buffer.concat([header, table, ...data]);
}

function tag(type: string, fields: Buffer[]): Buffer {
  return Buffer.concat([Buffer.from(type, 'latin1'), Buffer.alloc(4), ...fields]);
}

/** A multiLocalizedUnicodeType holding one en-US text. */
function multiLocalised(text: string): Buffer {
  const utf16 = Buffer.from(text, 'utf16le').swap16();
  const record = Buffer.alloc(20);
  record.writeUInt32BE(1, 0); // one record
  record.writeUInt32BE(12, 4); // of 12 bytes
  record.write('enUS', 8, 'latin1');
  record.writeUInt32BE(utf16.length, 12);
  record.writeUInt32BE(28, 16); // the text follows the tag's own 8 bytes and these 20
  return tag('mluc', [record, utf16]);
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value);
  return bytes;
}

function s15Fixed16(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(Math.round(value * 65536));
  return bytes;
}

/** XYZ of a chromaticity at Y = 1. */
function xyz([x, y]: [number, number]): Vector {
  return [x / y, 1, (1 - x - y) / y];
}

/** The matrix taking linear RGB to XYZ: primaries scaled so that full RGB is the white point. */
function rgbToXyz({ red, green, blue, white }: Chromaticities): Matrix {
  const columns = transpose([xyz(red), xyz(green), xyz(blue)]);
  const scale = apply(invert(columns), xyz(white));
  return columns.map((row) => row.map((value, i) => value * scale[i]!)) as Matrix;
}

/** Bradford adaptation of XYZ under `white` to XYZ under D50. */
function chromaticAdaptation(white: Vector): Matrix {
  const [source, target] = [apply(bradford, white), apply(bradford, d50)];
  const scaled = bradford.map((row, i) => row.map((value) => (value * target[i]!) / source[i]!)) as Matrix;
  return multiply(invert(bradford), scaled);
}

function column(m: Matrix, i: number): number[] {
  return m.map((row) => row[i]!);
}

function transpose(m: Matrix): Matrix {
  return [column(m, 0), column(m, 1), column(m, 2)] as Matrix;
}

function apply(m: Matrix, v: Vector): Vector {
  return m.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2]) as Vector;
}

function multiply(a: Matrix, b: Matrix): Matrix {
  return a.map((row) => [0, 1, 2].map((j) => row[0] * b[0][j]! + row[1] * b[1][j]! + row[2] * b[2][j]!)) as Matrix;
}

function invert(m: Matrix): Matrix {
  const [[a, b, c], [d, e, f], [g, h, i]] = m;
  const determinant = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  return [
    [(e * i - f * h) / determinant, (c * h - b * i) / determinant, (b * f - c * e) / determinant],
    [(f * g - d * i) / determinant, (a * i - c * g) / determinant, (c * d - a * f) / determinant],
    [(d * h - e * g) / determinant, (b * g - a * h) / determinant, (a * e - b * d) / determinant],
  ];
}
