// Durations configured in hours, where fractions are allowed, as the whole milliseconds that times
// are stored in: PostgreSQL's bigint columns refuse a fraction (0.333333 h is 1,199,998.8 ms), so a
// time computed from such a setting (a retention cutoff, a session's end) failed every statement it reached.
const hourMs = 3_600_000;

export function hoursToMs(hours: number): number {
  return Math.round(hours * hourMs);
}
