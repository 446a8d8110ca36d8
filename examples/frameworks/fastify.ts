// A groupq endpoint in Fastify 5. Fastify parses JSON bodies by default; inside this plugin every
// body is taken as the raw Buffer instead (addContentTypeParser, parseAs 'buffer'), the bytes
// groupq signed. createHandler takes them with the headers as `{ headers, body }` and answers
// `{ status, headers, body }`, sent as it is. Listen with `await app.listen({ port: 8790 })`.
import Fastify from 'fastify';
import { createHandler } from 'groupq/receiver';
import { countWords, handlerOptions } from './job';

const handle = createHandler(countWords, handlerOptions());

export const app = Fastify();

// A plugin is its own scope: the raw parser applies to its routes only, and JSON routes elsewhere keep Fastify's parser.
app.register(async (jobs) => {
  jobs.removeAllContentTypeParsers();
  // bodyLimit: the kit's maxBodyBytes (1 MiB), which is also Fastify's default.
  jobs.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1_048_576 }, (_request, body, done) => done(null, body));
  jobs.post('/jobs', async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const answer = await handle({ headers: request.headers, body });
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
});
