import type { FastifyReply } from 'fastify';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { passwordMinLength } from '../passwords.ts';

export interface AuthFormState {
  csrf: string;
  email?: string;
  error?: string;
  next?: string;
  notice?: string;
}

export function signUpPage(state: AuthFormState, freeCredits: number): string {
  return renderPage({
    title: 'Create an account',
    body: html`<section class="card narrow">
      <h1>Create an account</h1>
      <p>New accounts start on the free plan with ${freeCredits} free credits for the web app.</p>
      ${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
      <form method="post" action="/sign-up" class="stack" ${state.error ? html`aria-describedby="form-error"` : ''}>
        <input type="hidden" name="_csrf" value="${state.csrf}">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="email" required value="${state.email ?? ''}">
        <label for="password">Password <span class="hint">(at least ${passwordMinLength} characters)</span></label>
        <input id="password" name="password" type="password" autocomplete="new-password" minlength="${passwordMinLength}" required>
        <button type="submit" class="primary">Create account</button>
      </form>
      <p>Already have an account? <a href="/sign-in">Sign in</a></p>
    </section>`,
  });
}

export function signInPage(state: AuthFormState): string {
  return renderPage({
    title: 'Sign in',
    body: html`<section class="card narrow">
      <h1>Sign in</h1>
      ${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
      ${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
      <form method="post" action="/sign-in" class="stack" ${state.error ? html`aria-describedby="form-error"` : ''}>
        <input type="hidden" name="_csrf" value="${state.csrf}">
        <input type="hidden" name="next" value="${state.next ?? ''}">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${state.email ?? ''}">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required>
        <button type="submit" class="primary">Sign in</button>
      </form>
      <p>No account yet? <a href="/sign-up">Create one</a></p>
    </section>`,
  });
}

export function errorPage(title: string, message: string, status: number): string {
  return renderPage({
    title,
    body: html`<section class="card narrow">
      <h1>${title}</h1>
      <p role="alert">${message}</p>
      <p class="hint">HTTP ${status}</p>
      <p><a href="/app/remove">Back to the app</a></p>
    </section>`,
  });
}

export function sendNotFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('text/html').send(errorPage('Not found', 'There is nothing here, or it belongs to another account.', 404));
}
