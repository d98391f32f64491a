// Remove a background in the browser: an upload or a URL becomes a real task of the account,
// reserved from the same balance as the API, then the task page follows it to the result.
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError, TaskError } from '../../domain/errors.ts';
import { imageUrlSchema, outputFormats, precisions, subjects, type RemovalInput } from '../../domain/removal-request.ts';
import { findAccount, type Account } from '../../store/accounts-repository.ts';
import { createTask, findTaskForAccount } from '../../store/tasks-repository.ts';
import { countQueuedAhead, findTaskSource, recordTaskSource } from '../../store/web-tasks-repository.ts';
import { readHeader } from '../../vision/decode.ts';
import { previewMaxPixels, type WebContext } from '../context.ts';
import { decodesFully } from '../decodes-fully.ts';
import { first } from '../form-values.ts';
import { formatBytes, plural } from '../html.ts';
import { sendNotFound } from '../pages/auth-pages.ts';
import { removePage } from '../pages/remove-page.ts';
import { taskPage } from '../pages/task-page.ts';
import { requireSignIn, signedInAccount, taskStatusRoute } from '../session.ts';
import { webTaskStatus } from '../task-status.ts';
import { adoptUpload, discardUpload, storeUpload, UploadDiscardedError } from '../uploads.ts';
import { formFieldMaxBytes, readUploadForm } from '../upload-form.ts';

const optionalText = z.preprocess((v) => {
  const value = first(v);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}, z.string().optional());

const formSchema = z.object({
  file: z.preprocess((v) => {
    const value = first(v);
    return Buffer.isBuffer(value) && value.length > 0 ? value : undefined;
  }, z.instanceof(Buffer).optional()),
  image_url: optionalText.pipe(imageUrlSchema.optional()),
  subject: z.preprocess(first, z.enum(subjects).default('auto')),
  precision: z.preprocess(first, z.enum(precisions).default('standard')),
  output_format: z.preprocess(first, z.enum(outputFormats).default('png')),
});

export function removalRoutes(ctx: WebContext) {
  const maxSize = formatBytes(ctx.config.fetch.maxBytes);

  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('preHandler', requireSignIn);

    const showForm = (reply: FastifyReply, account: Account, status: number, error?: string, imageUrl?: string) =>
      reply.code(status).type('text/html').send(removePage({ account, csrf: reply.generateCsrf(), maxSize, error, imageUrl }));

    app.get('/app', async (_request, reply) => reply.redirect('/app/remove', 303));
    app.get('/app/remove', async (request, reply) => showForm(reply, signedInAccount(request), 200));

    // The one form that takes a file, in a scope of its own so no other form parses multipart
    // bodies (they answer 415 unread). The session is checked on request, before the body is
    // read, so an anonymous upload is never buffered; the CSRF token is in the body, so it is
    // checked once a signed-in visitor's body has been parsed.
    await app.register(async (upload) => {
      await upload.register(fastifyMultipart, {
        limits: { fileSize: ctx.config.fetch.maxBytes, files: 1, fields: 10, fieldSize: formFieldMaxBytes },
      });
      upload.addHook('preValidation', readUploadForm);
      upload.post('/app/removals', { onRequest: requireSignIn, preHandler: upload.csrfProtection }, createFromForm);
    });

    async function createFromForm(request: FastifyRequest, reply: FastifyReply) {
      const account = signedInAccount(request);
      const parsed = formSchema.safeParse(request.body);
      // What was typed goes back into the form with an error, so nothing needs retyping.
      const typed = first((request.body as Record<string, unknown> | undefined)?.image_url);
      const typedUrl = typeof typed === 'string' ? typed : undefined;
      if (!parsed.success) return showForm(reply, account, 400, parsed.error.issues[0]?.message ?? 'Check the form.', typedUrl);
      const form = parsed.data;
      if (!form.file && !form.image_url) return showForm(reply, account, 400, 'Choose or drop an image file, or paste an image URL.', typedUrl);

      let uploadKey: string | null = null;
      let imageUrl = form.image_url ?? '';
      if (form.file) {
        try {
          await readHeader(form.file, ctx.config.maxPixels);
        } catch (err) {
          if (err instanceof TaskError) return showForm(reply, account, 400, `That file cannot be used: ${err.message}`);
          throw err;
        }
        if (!(await decodesFully(form.file, ctx.config.maxPixels))) {
          return showForm(reply, account, 400, 'That file cannot be used: the image data is incomplete or damaged.');
        }
        uploadKey = await storeUpload(ctx, form.file);
        // The v1 API shows this as the task's input.image_url: the uploaded original, viewable by its owner when signed in.
        imageUrl = `${ctx.baseUrl()}/app/uploads/${uploadKey}`;
      }
      const input: RemovalInput = { image_url: imageUrl, subject: form.subject, precision: form.precision, output_format: form.output_format };
      try {
        const { task } = await createTask(ctx.db, {
          accountId: account.id,
          input,
          idempotencyKey: undefined,
          maxActiveTasks: ctx.config.maxActiveTasks,
          onCreate: async (tx, taskId) => {
            if (uploadKey) await adoptUpload(tx, uploadKey);
            await recordTaskSource(tx, taskId, { uploadKey, maxPixels: account.apiAccess ? null : previewMaxPixels });
          },
        });
        request.log.info({ taskId: task.id, accountId: account.id, upload: uploadKey !== null }, 'web task created');
        ctx.onTaskCreated();
        return reply.redirect(`/app/tasks/${task.id}`, 303);
      } catch (err) {
        if (uploadKey) await discardUpload(ctx, uploadKey, request.log);
        if (err instanceof UploadDiscardedError) {
          request.log.warn({ err }, 'an upload was claimed as an orphan before its task was created');
          return showForm(reply, account, 409, 'The upload took too long and was discarded. Choose the file again.');
        }
        if (err instanceof ApiError && (err.code === 'insufficient_credits' || err.code === 'concurrency_limit')) {
          const hint = err.code === 'insufficient_credits' ? ' See Credits for how to get more.' : '';
          return showForm(reply, account, err.status, `${err.message}${hint}`, form.image_url);
        }
        throw err;
      }
    }

    async function ownTask(accountId: string, id: string) {
      return findTaskForAccount(ctx.db, id, accountId);
    }

    app.get('/app/tasks/:id', async (request, reply) => {
      const account = signedInAccount(request);
      const { id } = z.object({ id: z.string() }).parse(request.params);
      const task = await ownTask(account.id, id);
      if (!task) return sendNotFound(reply);
      const status = await webTaskStatus(task, await countQueuedAhead(ctx.db, task), ctx.links, ctx.config.resultRetentionHours);
      const preview = (await findTaskSource(ctx.db, task.id))?.maxPixels != null;
      return reply.type('text/html').send(taskPage({ account, csrf: reply.generateCsrf(), task, status, preview }));
    });

    app.get(taskStatusRoute, async (request, reply) => {
      const account = signedInAccount(request);
      const { id } = z.object({ id: z.string() }).parse(request.params);
      const task = await ownTask(account.id, id);
      if (!task) return reply.code(404).send({ error: { code: 'task_not_found', message: `No task ${id} for this account.` } });
      const fresh = await findAccount(ctx.db, account.id);
      const balanceLabel = plural(fresh?.creditsAvailable ?? 0, 'credit');
      return reply.header('Cache-Control', 'no-store').send({ ...(await webTaskStatus(task, await countQueuedAhead(ctx.db, task), ctx.links, ctx.config.resultRetentionHours)), balanceLabel });
    });
  };
}
