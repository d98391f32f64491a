// An HTTP-date (RFC 9110 §5.6.7) in any of the three forms a recipient must accept, or nothing.
// Date.parse is no check: it reads "1" as 2001 and asctime in the server's time zone, and a
// precondition on such a value would refuse a download the client never meant to refuse.
const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const month = months.join('|');
const time = '(\\d{2}):(\\d{2}):(\\d{2})';
const imfFixdate = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) (${month}) (\\d{4}) ${time} GMT$`);
const rfc850 = new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-(${month})-(\\d{2}) ${time} GMT$`);
const asctime = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (${month}) ([ \\d]\\d) ${time} (\\d{4})$`);

function utc(year: number, monthName: string, day: number, hour: number, minute: number, second: number): number | undefined {
  const ms = Date.UTC(year, months.indexOf(monthName), day, hour, minute, second);
  // A day or time out of range (31 Feb, 25:00) is no date: Date.UTC would roll it over.
  return new Date(ms).getUTCDate() === day && hour < 24 && minute < 60 && second < 61 ? ms : undefined;
}

/** Milliseconds since the epoch, or undefined for anything that is not one HTTP-date. */
export function parseHttpDate(value: string | undefined): number | undefined {
  const text = value?.trim() ?? '';
  let m = imfFixdate.exec(text);
  if (m) return utc(Number(m[3]), m[2]!, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  m = rfc850.exec(text);
  if (m) {
    // RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is in the past century.
    const thisYear = new Date().getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    return utc(year, m[2]!, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  m = asctime.exec(text);
  if (m) return utc(Number(m[6]), m[1]!, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]));
  return undefined;
}
