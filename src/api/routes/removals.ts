import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../../domain/errors.ts';
import { isWellFormedId } from '../../domain/ids.ts';
import { canonicalInput, createRemovalBodySchema } from '../../domain/removal-request.ts';
import { createTask, findTaskForAccount } from '../../store/tasks-repository.ts';
import { requireAccount } from '../plugins/authenticate.ts';
import { bgRemovalSchema, errorResponses, idempotencyHeaderSchema, undecodableBodyResponse } from '../schemas.ts';
import { toBgRemoval } from '../task-view.ts';
import { refuseRepeated } from '../single-header.ts';
import type { ApiContext } from '../context.ts';

const security = [{ bearerAuth: [] }];

// The two busiest routes write their bodies with plain JSON.stringify instead of re-checking them
// against the Zod schema on the way out: every body here is built by our own typed code
// (toBgRemoval, the error handler), the schema check was a tenth of a poll's cost (bench:api
// profile), and the tests check every task body they poll against the schema (test/support/poll.ts).
const plainJson = () => (data: unknown) => JSON.stringify(data);

/** An id that cannot be a task's is unknown like any other, with a hint at what ids look like. */
export const malformedTaskIdMessage = 'No task has this id: task ids are "bgr_" followed by 20 lowercase letters and digits.';

export function removalRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/bg/removals',
      {
        onRequest: ctx.authenticate,
        // Before the schema, so that two keys joined into one are not judged as a single key.
        preValidation: refuseRepeated('Idempotency-Key'),
        serializerCompiler: plainJson,
        schema: {
          operationId: 'createBgRemoval',
          summary: 'Create a removal',
          description:
            'Queues a background removal of the image at `image_url` and reserves its credits (1 for `standard`, 2 for `high`). ' +
            'With an `Idempotency-Key`, the same key and the same request (after defaults and `hd`→`high`) return the original task ' +
            'with 202 and no new charge; a different request gets 409 `idempotency_conflict`. Checks run in this order: API key (401), ' +
            'rate limit (429), API access (403), request (400), idempotency (409 or replay), active tasks (429 `concurrency_limit`), credits (402).',
          security,
          headers: idempotencyHeaderSchema,
          body: createRemovalBodySchema,
          response: {
            202: bgRemovalSchema.describe(
              'The task was queued (`status: "queued"`) and its credits reserved; or, with `Idempotent-Replayed: true`, the task an earlier request with the same `Idempotency-Key` created, in its current state, with no new charge.',
            ),
            ...errorResponses(['invalid_request', 'invalid_api_key', 'insufficient_credits', 'api_access_required', 'idempotency_conflict', 'rate_limit_exceeded', 'concurrency_limit', 'service_unavailable']),
            ...undecodableBodyResponse,
          },
        },
      },
      async (request, reply) => {
        const account = requireAccount(request);
        const { task, replayed } = await createTask(ctx.db, {
          accountId: account.id,
          input: canonicalInput(request.body),
          idempotencyKey: request.headers['idempotency-key'],
          maxActiveTasks: ctx.config.maxActiveTasks,
        });
        if (replayed) reply.header('Idempotent-Replayed', 'true');
        else {
          request.log.info({ taskId: task.id, accountId: account.id }, 'task created');
          ctx.onTaskCreated();
        }
        return reply.code(202).send(await toBgRemoval(task, ctx.links, ctx.config.resultRetentionHours));
      },
    );

    app.get(
      '/bg/removals/:task_id',
      {
        onRequest: ctx.authenticate,
        serializerCompiler: plainJson,
        schema: {
          operationId: 'getBgRemoval',
          summary: 'Query task status',
          description:
            'Returns the current state. A succeeded task carries a freshly signed result URL on every call. ' +
            'Checks run in this order: API key (401), rate limit (429), API access (403), task (404).',
          security,
          params: z.object({ task_id: z.string().describe('The `id` of a task.') }),
          response: {
            200: bgRemovalSchema.describe('The task in its current state; a succeeded one with a freshly signed `output.url`.'),
            ...errorResponses(['invalid_api_key', 'api_access_required', 'task_not_found', 'rate_limit_exceeded', 'service_unavailable']),
          },
        },
      },
      async (request) => {
        const account = requireAccount(request);
        const id = request.params.task_id;
        // An id that cannot be a task's finds nothing; its shape is looked at only then, for the hint.
        const task = await findTaskForAccount(ctx.db, id, account.id);
        if (!task) throw new ApiError('task_not_found', isWellFormedId('bgr', id) ? `No task ${id} for this account.` : malformedTaskIdMessage);
        return toBgRemoval(task, ctx.links, ctx.config.resultRetentionHours);
      },
    );
  };
}
