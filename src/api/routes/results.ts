import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../../domain/errors.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiContext } from '../context.ts';

const contentTypes: Record<string, string> = { png: 'image/png', webp: 'image/webp' };

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
          querystring: z.object({ expires: z.string().optional(), signature: z.string().optional() }),
          response: {
            200: z.any().describe('The cutout: image/png (RGBA) or image/webp (lossless with alpha).'),
            ...errorResponses(['result_url_invalid', 'result_url_expired', 'result_not_found']),
          },
        },
      },
      async (request, reply) => {
        const { key } = request.params;
        const check = ctx.signer.verify(key, request.query.expires, request.query.signature);
        if (check === 'invalid') throw new ApiError('result_url_invalid', 'The result URL signature is missing or does not match.');
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
