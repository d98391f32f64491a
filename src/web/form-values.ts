// Query strings and forms may repeat a name (`?next=a&next=b`); the parsers then give an array.
// Every page reads such a name as given once, with its first value, rather than refusing the request.
import { z } from 'zod';

export const first = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);

/** An optional text parameter, its first value when repeated. */
export const firstText = z.preprocess(first, z.string().optional());
