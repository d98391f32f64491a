import type { FastifyInstance } from 'fastify';
import { listLedger } from '../../store/accounts-repository.ts';
import type { WebContext } from '../context.ts';
import { creditsPage } from '../pages/credits-page.ts';
import { requireSignIn, signedInAccount } from '../session.ts';

export function creditRoutes(ctx: WebContext) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/app/credits', { preHandler: requireSignIn }, async (request, reply) => {
      const account = signedInAccount(request);
      const ledger = await listLedger(ctx.db, account.id);
      return reply.type('text/html').send(creditsPage({ account, csrf: reply.generateCsrf(), ledger, offer: ctx.creditOffer.render(account) }));
    });
  };
}
