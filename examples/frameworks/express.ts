// A groupq endpoint in Express 5. express.raw() keeps the body as the bytes groupq signed (a
// JSON parser would hand over an object, and the same JSON encoded again is not what was
// signed); createHandler takes them with the headers as `{ headers, body }` and answers
// `{ status, headers, body }`, sent as it is. Listen with `app.listen(8790)`.
import express from 'express';
import { createHandler } from 'groupq/receiver';
import { countWords, handlerOptions } from './job';

const handle = createHandler(countWords, handlerOptions());

export const app = express();

// Only this route takes the raw body; the rest of the app may keep express.json(). The limit
// is the kit's maxBodyBytes (1 MiB): express.raw() reads 100 kB by default, less than a job may carry.
app.post('/jobs', express.raw({ type: () => true, limit: '1mb' }), async (req, res) => {
  // No body at all leaves req.body unset: an empty one fails the signature check (401).
  const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const answer = await handle({ headers: req.headers, body });
  res.status(answer.status).set(answer.headers).send(answer.body);
});
