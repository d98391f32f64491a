// The form tokens (@fastify/csrf-protection) and their secret's cookie, named as session.ts names
// cookies: __Host-_csrf where it is Secure, _csrf on plain http. The plugin takes one cookie name,
// at registration. With an https public URL every answer's cookies are Secure, so that one name is
// the prefixed one. Otherwise the name follows each request's scheme: the plugin is given the
// plain name, and over https it is handed the prefixed cookie under that name and what it sets
// goes out renamed, so that a plain-named secret, which another host of the domain could plant
// knowing its value, is never read there.
import fastifyCsrf from '@fastify/csrf-protection';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { cookieSecurity, formSecretCookie, hostOnly } from './session.ts';

export async function registerFormTokens(app: FastifyInstance, config: Config): Promise<void> {
  const cookieOpts = cookieSecurity(config);
  const prefixed = hostOnly(formSecretCookie);
  if (cookieOpts.secure === true) {
    await app.register(fastifyCsrf, { sessionPlugin: '@fastify/cookie', cookieKey: prefixed, cookieOpts });
    return;
  }
  await app.register(fastifyCsrf, { sessionPlugin: '@fastify/cookie', cookieKey: formSecretCookie, cookieOpts });
  app.addHook('onRequest', async (request) => {
    if (request.protocol !== 'https') return;
    const secret = request.cookies[prefixed];
    if (secret === undefined) delete request.cookies[formSecretCookie];
    else request.cookies[formSecretCookie] = secret;
  });
  // After @fastify/cookie's own onSend hook (registered before this module), which writes the
  // Set-Cookie header from the cookies set while answering.
  app.addHook('onSend', async (request, reply, payload) => {
    const sent = reply.getHeader('set-cookie');
    if (request.protocol !== 'https' || sent === undefined) return payload;
    const plain = `${formSecretCookie}=`;
    const renamed = [sent].flat().map((header) => {
      const text = String(header);
      return text.startsWith(plain) ? `${prefixed}=${text.slice(plain.length)}` : text;
    });
    // Fastify adds to a Set-Cookie header rather than replacing it.
    reply.removeHeader('set-cookie');
    reply.header('set-cookie', renamed);
    return payload;
  });
}
