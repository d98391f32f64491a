// Sign up, sign in, sign out. Every form carries a CSRF token; sign-up and sign-in are throttled.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { emailSchema } from '../../domain/email.ts';
import { EmailTakenError } from '../../store/accounts-repository.ts';
import { createWebAccount, findCredentialsByEmail } from '../../store/web-accounts-repository.ts';
import type { WebContext } from '../context.ts';
import { firstText } from '../form-values.ts';
import { plural } from '../html.ts';
import { signInPage, signUpPage } from '../pages/auth-pages.ts';
import { hashPassword, passwordMaxLength, passwordMinLength, verifyPassword } from '../passwords.ts';
import { endSession, startSession } from '../session.ts';
import { SignInThrottle } from '../sign-in-throttle.ts';
import { SignUpThrottle } from '../sign-up-throttle.ts';

const credentialsSchema = z.object({
  email: emailSchema,
  password: z.string(),
  next: z.string().optional(),
});

const ownOrigin = 'http://cutout.invalid';

/**
 * Only our own pages are valid targets after sign-in: no open redirect. The path is checked as a
 * browser resolves it, so dot segments (`/app/../`, `/app/%2e%2e/`) cannot leave /app/.
 */
function safeNext(next: string | undefined): string {
  if (!next || !/^\/app\/[A-Za-z0-9/_\-.?=&%]*$/.test(next)) return '/app/remove';
  const resolved = new URL(next, ownOrigin);
  return resolved.origin === ownOrigin && resolved.pathname.startsWith('/app/') ? `${resolved.pathname}${resolved.search}` : '/app/remove';
}

export function authRoutes(ctx: WebContext) {
  const throttle = new SignInThrottle(ctx.db, ctx.config.web.signInMaxFailures);
  const signUps = new SignUpThrottle(ctx.db, ctx.config.web.signUpsPerHour);

  return async (app: FastifyInstance): Promise<void> => {
    app.get('/', async (request, reply) => reply.redirect(request.webAccount ? '/app/remove' : '/sign-in', 303));

    app.get('/sign-up', async (request, reply) => {
      if (request.webAccount) return reply.redirect('/app/remove', 303);
      return reply.type('text/html').send(signUpPage({ csrf: reply.generateCsrf() }, ctx.config.web.freeCredits));
    });

    app.post('/sign-up', { preHandler: app.csrfProtection }, async (request, reply) => {
      const parsed = credentialsSchema.safeParse(request.body);
      const email = typeof (request.body as { email?: unknown })?.email === 'string' ? (request.body as { email: string }).email : '';
      const fail = (error: string, status = 400) =>
        reply.code(status).type('text/html').send(signUpPage({ csrf: reply.generateCsrf(), email, error }, ctx.config.web.freeCredits));
      if (!parsed.success) return fail(parsed.error.issues[0]?.message ?? 'Check the form.');
      const { password } = parsed.data;
      if (password.length < passwordMinLength) return fail(`The password needs at least ${passwordMinLength} characters.`);
      if (password.length > passwordMaxLength) return fail(`The password may have at most ${passwordMaxLength} characters.`);
      // Counted before the email is looked at, so a taken email costs a turn like a new account.
      const turn = await signUps.take(request.ip);
      if (!turn.allowed) {
        const minutes = Math.ceil(turn.retryAfterSeconds / 60);
        reply.header('Retry-After', String(turn.retryAfterSeconds));
        return fail(`Too many sign-ups from your network this hour. Try again in ${plural(minutes, 'minute')}.`, 429);
      }
      try {
        const passwordHash = await hashPassword(password);
        const account = await createWebAccount(ctx.db, { email: parsed.data.email, passwordHash, credits: ctx.config.web.freeCredits });
        request.log.info({ accountId: account.id }, 'web account created');
        // As at sign-in: a session of another account in this browser ends with the new one's start.
        await endSession(ctx.db, ctx.config, request, reply);
        // An operator who set another password in the meantime decides: the new owner signs in with it.
        if (!(await startSession(ctx.db, ctx.config, reply, { accountId: account.id, passwordHash }))) return reply.redirect('/sign-in', 303);
        return reply.redirect('/app/remove', 303);
      } catch (err) {
        if (err instanceof EmailTakenError) return fail('An account with this email already exists. Sign in instead.', 409);
        throw err;
      }
    });

    app.get('/sign-in', async (request, reply) => {
      const query = z.object({ next: firstText, signed_out: firstText }).parse(request.query);
      if (request.webAccount) return reply.redirect(safeNext(query.next), 303);
      const notice = query.signed_out !== undefined ? 'You are signed out.' : undefined;
      return reply.type('text/html').send(signInPage({ csrf: reply.generateCsrf(), next: query.next, notice }));
    });

    app.post('/sign-in', { preHandler: app.csrfProtection }, async (request, reply) => {
      const parsed = credentialsSchema.safeParse(request.body);
      const raw = request.body as { email?: unknown; next?: unknown } | undefined;
      const email = typeof raw?.email === 'string' ? raw.email : '';
      const next = typeof raw?.next === 'string' ? raw.next : undefined;
      const fail = (error: string, status: number) =>
        reply.code(status).type('text/html').send(signInPage({ csrf: reply.generateCsrf(), email, next, error }));
      if (!parsed.success) return fail('Enter your email and password.', 400);

      const guess = await throttle.guess(parsed.data.email, request.ip);
      if (!guess.allowed) {
        const minutes = Math.ceil(guess.retryAfterSeconds / 60);
        reply.header('Retry-After', String(guess.retryAfterSeconds));
        return fail(`Too many failed sign-in attempts. For your security, try again in ${plural(minutes, 'minute')}.`, 429);
      }
      const credentials = await findCredentialsByEmail(ctx.db, parsed.data.email);
      const ok = await verifyPassword(credentials?.passwordHash, parsed.data.password);
      if (!ok || !credentials) return fail('The email or password is not right.', 401);
      // A session token known before sign-in is never promoted: the old one ends, a new one starts.
      await endSession(ctx.db, ctx.config, request, reply);
      // Only with the password checked, still the account's: one replaced by a reset that ran
      // during the check would otherwise give a session the reset never ended.
      if (!(await startSession(ctx.db, ctx.config, reply, credentials))) return fail('The email or password is not right.', 401);
      await guess.succeeded();
      return reply.redirect(safeNext(parsed.data.next), 303);
    });

    app.post('/sign-out', { preHandler: app.csrfProtection }, async (request, reply) => {
      await endSession(ctx.db, ctx.config, request, reply);
      return reply.redirect('/sign-in?signed_out=1', 303);
    });
  };
}
