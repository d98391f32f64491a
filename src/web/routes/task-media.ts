// Images the pages show: an uploaded original (to its owner) and result thumbnails.
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { z } from 'zod';
import { isUploadKey } from '../../storage/upload-store.ts';
import { decodableBytes, inSourceColours, readHeader, type ImageHeader } from '../../vision/decode.ts';
import { findTaskForAccount } from '../../store/tasks-repository.ts';
import { uploadBelongsTo } from '../../store/web-tasks-repository.ts';
import type { WebContext } from '../context.ts';
import { errorPage, sendNotFound } from '../pages/auth-pages.ts';
import { requireSignIn, signedInAccount } from '../session.ts';
import { bucketOutage, thumbnailOf } from '../thumbnails.ts';

const viewerMaxSide = 2048;

/** The upload as the pipeline decodes it (decode.ts): its header, and bytes sharp reads in the right colours. */
async function viewable(data: Buffer, maxPixels: number): Promise<{ bytes: Buffer; header: ImageHeader }> {
  const header = await readHeader(data, maxPixels);
  return { bytes: await decodableBytes(data, header, maxPixels), header };
}

export function taskMediaRoutes(ctx: WebContext) {
  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('preHandler', requireSignIn);

    app.get('/app/uploads/:key', async (request, reply) => {
      const account = signedInAccount(request);
      const { key } = z.object({ key: z.string() }).parse(request.params);
      if (!isUploadKey(key) || !(await uploadBelongsTo(ctx.db, key, account.id))) return sendNotFound(reply);
      const data = await ctx.uploads.read(key);
      if (!data) return sendNotFound(reply);
      // Re-encoded upright as WebP, so every browser can show what was uploaded (TIFF, HEIF…), in
      // the colours the cutout is made from: deep TIFF samples and an AVIF's wide primaries are read
      // as the pipeline reads them (decode.ts), not as sharp alone would.
      // Uploads are checked to decode, but one stored before that check, or damaged since, may not.
      const image = await viewable(data, ctx.config.maxPixels)
        .then(({ bytes, header }) =>
          inSourceColours(sharp(bytes, { limitInputPixels: ctx.config.maxPixels }), header)
            .autoOrient()
            .resize({ width: viewerMaxSide, height: viewerMaxSide, fit: 'inside', withoutEnlargement: true })
            .webp({ quality: 85 })
            .toBuffer(),
        )
        .catch((err: unknown) => {
          request.log.warn({ err, key }, 'an uploaded original does not decode');
          return undefined;
        });
      if (!image) {
        return reply.code(422).type('text/html').send(errorPage('Image cannot be shown', 'The uploaded original cannot be shown: its data is damaged or incomplete.', 422));
      }
      return reply.header('Cache-Control', 'private, max-age=3600').type('image/webp').send(image);
    });

    app.get('/app/tasks/:id/thumbnail', async (request, reply) => {
      const account = signedInAccount(request);
      const { id } = z.object({ id: z.string() }).parse(request.params);
      const task = await findTaskForAccount(ctx.db, id, account.id);
      // Before any cached thumbnail: the row says whose task it is and whether its result is kept.
      if (!task?.result_key || task.result_deleted_at !== null) return sendNotFound(reply);
      const resultKey = task.result_key;
      const thumbnail = await thumbnailOf({
        key: resultKey,
        open: () => ctx.results.open(resultKey),
        maxPixels: ctx.config.maxPixels,
        // A damaged result: the list shows no thumbnail rather than failing the image request.
        onUndecodable: (err) => request.log.warn({ err, taskId: task.id }, 'a result does not decode for its thumbnail'),
        // Nor when the store fails: never a redirect to the full image, which is what this avoids.
        onUnreadable: (err) => request.log.warn({ err, taskId: task.id }, 'a result could not be read for its thumbnail'),
        // A bucket that fails fails for every result; a folder may fail one file and serve the next.
        outage: ctx.config.s3 ? bucketOutage : undefined,
        // Node ends its side of the connection as soon as it reads the browser's FIN: from then on
        // the answer can never be sent, though the socket counts as destroyed only a loop turn or
        // more later, and a turn that comes in between must not decode.
        abandoned: () => !request.raw.socket.writable,
      });
      if (thumbnail === 'busy') {
        return reply.code(503).header('Retry-After', '5').type('text/plain').send('Too many thumbnails are being made; try again shortly.\n');
      }
      if (!thumbnail) return sendNotFound(reply);
      return reply.header('Cache-Control', 'private, max-age=3600').type('image/webp').send(thumbnail);
    });
  };
}
