// A process that sets the pipeline's collector (markAtomically), then prints the kinds of
// collection it makes (collections.ts) as JSON: garbage-collection.test.ts starts it with and
// without --incremental-marking.
import { markAtomically } from '../../src/vision/garbage-collection.ts';
import { collectionKinds } from './collections.ts';

markAtomically();
process.stdout.write(JSON.stringify(await collectionKinds()));
