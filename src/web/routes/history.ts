import type { FastifyInstance } from 'fastify';
import { linkToResult } from '../../storage/result-store.ts';
import { listRecentTasks } from '../../store/web-tasks-repository.ts';
import type { WebContext } from '../context.ts';
import { historyPage } from '../pages/history-page.ts';
import { requireSignIn, signedInAccount } from '../session.ts';

const historyLength = 50;

export function historyRoutes(ctx: WebContext) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/app/history', { preHandler: requireSignIn }, async (request, reply) => {
      const account = signedInAccount(request);
      const entries = await listRecentTasks(ctx.db, account.id, historyLength);
      const downloads = new Map<string, string>();
      for (const { task } of entries) {
        if (task.status === 'succeeded' && task.result_key && task.result_deleted_at === null) downloads.set(task.id, (await linkToResult(ctx.links, task.result_key, task.finished_at, ctx.config.resultRetentionHours)).url);
      }
      return reply.type('text/html').send(historyPage({ account, csrf: reply.generateCsrf(), entries, downloads }));
    });
  };
}
