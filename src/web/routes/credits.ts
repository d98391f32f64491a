import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listLedgerPage } from '../../store/accounts-repository.ts';
import type { WebContext } from '../context.ts';
import { first } from '../form-values.ts';
import { creditsPage } from '../pages/credits-page.ts';
import { requireSignIn, signedInAccount } from '../session.ts';

const ledgerPageSize = 100;

/** `?before=<entry id>` pages to older entries; anything else shows the newest. */
const ledgerQuery = z.object({ before: z.preprocess(first, z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER)) });

export function creditRoutes(ctx: WebContext) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/app/credits', { preHandler: requireSignIn }, async (request, reply) => {
      const account = signedInAccount(request);
      const query = ledgerQuery.safeParse(request.query);
      const beforeId = query.success ? query.data.before : undefined;
      const { entries, more } = await listLedgerPage(ctx.db, account.id, { limit: ledgerPageSize, beforeId });
      const olderThan = more ? entries.at(-1)?.id : undefined;
      return reply.type('text/html').send(
        creditsPage({ account, csrf: reply.generateCsrf(), ledger: entries, paged: beforeId !== undefined, olderThan, offer: ctx.creditOffer.render(account) }),
      );
    });
  };
}
