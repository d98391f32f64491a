// URLs whose host is, or is written as, an address the service must never fetch. Tests use them only
// through the address check or against a refusing fetch: the loopback guard fails the run if any
// socket to a non-loopback address opens.
export const forbiddenAddressUrls = [
  'http://127.1/',
  'http://2130706433/',
  'http://[::1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://169.254.169.254/latest/meta-data',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://0.0.0.0/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://224.0.0.1/',
];
