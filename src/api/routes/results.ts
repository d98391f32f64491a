import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../../domain/errors.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiContext } from '../context.ts';

const contentTypes: Record<string, string> = { png: 'image/png', webp: 'image/webp' };
const signedParameter = z.string().optional().catch(undefined);

export const invalidResultUrlMessage = 'The result URL signature is missing or does not match.';

export function resultRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/results/:key',
      {
        schema: {
          operationId: 'downloadResult',
          summary: 'Download a result (signed URL)',
          description:
            'The `output.url` of a succeeded task. It needs no Authorization header: the URL itself carries an expiry and an HMAC ' +
            'signature. A changed URL gets 403 `result_url_invalid`, an expired one 410 `result_url_expired` (GET the task for a fresh URL), ' +
            'and a result deleted after the retention period 404 `result_not_found`.',
          params: z.object({ key: z.string() }),
          // A parameter given twice is not the URL we signed: it reads as missing, so the answer is
          // 403 result_url_invalid like any other changed URL, not a validation error.
          querystring: z.object({ expires: signedParameter, signature: signedParameter }),
          response: {
            200: {
              description: 'The cutout, in the `output.format` of the task.',
              content: {
                'image/png': { schema: z.unknown().describe('PNG with an alpha channel (RGBA).') },
                'image/webp': { schema: z.unknown().describe('Lossless WebP with an alpha channel.') },
              },
            },
            ...errorResponses(['result_url_invalid', 'result_url_expired', 'result_not_found']),
          },
        },
      },
      async (request, reply) => {
        const { key } = request.params;
        const check = ctx.signer.verify(key, request.query.expires, request.query.signature);
        if (check === 'invalid') throw new ApiError('result_url_invalid', invalidResultUrlMessage);
        if (check === 'expired') throw new ApiError('result_url_expired', 'The result URL has expired; GET the task again for a fresh URL.');
        const file = await ctx.downloads?.open(key);
        if (!file) throw new ApiError('result_not_found', 'The result no longer exists; results are deleted after the retention period.');
        const extension = key.split('.').pop() ?? '';
        const secondsLeft = Math.max(0, Number(request.query.expires) - Math.floor(Date.now() / 1000));
        return reply
          .header('Content-Type', contentTypes[extension] ?? 'application/octet-stream')
          .header('Content-Length', String(file.size))
          .header('Cache-Control', `private, max-age=${secondsLeft}`)
          .header('Content-Disposition', `inline; filename="${key}"`)
          .send(file.stream);
      },
    );
  };
}
