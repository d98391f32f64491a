// How a download answers the conditional and range headers of a client that revalidates or
// resumes (RFC 9110 §13 and §14). A result file never changes under its key (each attempt writes
// its own), so its size and time make a strong validator.
import type { IncomingHttpHeaders } from 'node:http';
import { parseHttpDate } from './http-date.ts';

export type ResultAnswer =
  | { kind: 'whole' }
  | { kind: 'not-modified' }
  | { kind: 'precondition-failed' }
  | { kind: 'part'; start: number; end: number }
  | { kind: 'unsatisfiable' };

interface Version {
  size: number;
  tag: string;
  modified: Date;
}

export function entityTag(file: { size: number; modified: Date }): string {
  return `"${file.size.toString(16)}-${file.modified.getTime().toString(16)}"`;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

const wholeSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * If-Match compares tags strongly (a weak tag never matches); If-Unmodified-Since counts only
 * without it, and only when it is one HTTP-date (RFC 9110 §13.1.1, §13.1.4).
 */
function stillTheVersion(request: IncomingHttpHeaders, file: Version): boolean {
  const match = headerValue(request['if-match']);
  if (match !== undefined) return match.trim() === '*' || match.split(',').some((tag) => tag.trim() === file.tag);
  const since = parseHttpDate(headerValue(request['if-unmodified-since']));
  return since === undefined || wholeSeconds(file.modified) <= Math.floor(since / 1000);
}

/** If-None-Match compares tags weakly; If-Modified-Since counts only without it. */
function clientHasIt(request: IncomingHttpHeaders, file: Version): boolean {
  const noneMatch = headerValue(request['if-none-match']);
  if (noneMatch !== undefined) {
    const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
    return noneMatch.trim() === '*' || noneMatch.split(',').some((tag) => opaque(tag) === opaque(file.tag));
  }
  const since = Date.parse(headerValue(request['if-modified-since']) ?? '');
  return Number.isFinite(since) && wholeSeconds(file.modified) <= Math.floor(since / 1000);
}

/** If-Range holds a strong tag or a date; the range is served only when it names this version. */
function rangeStillApplies(ifRange: string | undefined, file: Version): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === file.tag;
  return Number.isFinite(Date.parse(value)) && Math.floor(Date.parse(value) / 1000) === wholeSeconds(file.modified);
}

/** One byte range; anything else (several ranges, another unit, bad syntax) is ignored, as HTTP allows. */
function byteRange(header: string, size: number): ResultAnswer {
  const match = /^bytes=[ \t]*(\d*)-(\d*)[ \t]*$/i.exec(header);
  if (!match || (match[1] === '' && match[2] === '')) return { kind: 'whole' };
  const [first, last] = [match[1], match[2]];
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    return part(Math.max(0, size - suffix), size - 1, size);
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return part(start, last === '' ? size - 1 : Math.min(Number(last), size - 1), size);
}

function part(start: number, end: number, size: number): ResultAnswer {
  return start === 0 && end === size - 1 ? { kind: 'whole' } : { kind: 'part', start, end };
}

/** The preconditions in the order of RFC 9110 §13.2.2: a false If-Match wins over all the others. */
export function answerFor(method: string, request: IncomingHttpHeaders, file: Version): ResultAnswer {
  if (!stillTheVersion(request, file)) return { kind: 'precondition-failed' };
  if (clientHasIt(request, file)) return { kind: 'not-modified' };
  const range = headerValue(request.range);
  if (method !== 'GET' || range === undefined || !rangeStillApplies(headerValue(request['if-range']), file)) return { kind: 'whole' };
  return byteRange(range, file.size);
}
