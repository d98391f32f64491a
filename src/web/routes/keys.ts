// Account settings → API keys: create (the full key is in this one response only), list, delete.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { keyNameSchema } from '../../domain/key-name.ts';
import { createApiKey, deleteApiKey, listApiKeys } from '../../store/api-keys-repository.ts';
import type { WebContext } from '../context.ts';
import { firstText } from '../form-values.ts';
import { keysPage, type KeysPageState } from '../pages/keys-page.ts';
import { requireSignIn, signedInAccount } from '../session.ts';

const keyNameForm = z.object({ name: keyNameSchema });

export function keyRoutes(ctx: WebContext) {
  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('preHandler', requireSignIn);

    async function render(state: Omit<KeysPageState, 'keys'>): Promise<string> {
      return keysPage({ ...state, keys: await listApiKeys(ctx.db, state.account.id) });
    }

    app.get('/app/settings/keys', async (request, reply) => {
      const notice = z.object({ deleted: firstText }).parse(request.query).deleted !== undefined ? 'The key was deleted.' : undefined;
      return reply.type('text/html').send(await render({ account: signedInAccount(request), csrf: reply.generateCsrf(), notice }));
    });

    app.post('/app/settings/keys', { preHandler: app.csrfProtection }, async (request, reply) => {
      const account = signedInAccount(request);
      const parsed = keyNameForm.safeParse(request.body);
      if (!parsed.success) {
        return reply.code(400).type('text/html').send(await render({ account, csrf: reply.generateCsrf(), error: 'Give the key a name (1–100 characters, no control characters).' }));
      }
      const created = await createApiKey(ctx.db, account.id, parsed.data.name);
      request.log.info({ accountId: account.id, keyId: created.id }, 'API key created in the web app');
      // The page holds a secret: no cache may keep it, and a reload does not show it again.
      return reply
        .header('Cache-Control', 'no-store')
        .type('text/html')
        .send(await render({ account, csrf: reply.generateCsrf(), created: { name: created.name, key: created.key } }));
    });

    app.post('/app/settings/keys/:id/delete', { preHandler: app.csrfProtection }, async (request, reply) => {
      const account = signedInAccount(request);
      const { id } = z.object({ id: z.string() }).parse(request.params);
      const owned = (await listApiKeys(ctx.db, account.id)).some((k) => k.id === id);
      if (owned) {
        await deleteApiKey(ctx.db, id);
        request.log.info({ accountId: account.id, keyId: id }, 'API key deleted in the web app');
      }
      return reply.redirect('/app/settings/keys?deleted=1', 303);
    });
  };
}
