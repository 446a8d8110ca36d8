// A groupq endpoint in Express 5, for jobs (/jobs) and for outcome callbacks (/outcomes).
// express.raw() keeps the body as the bytes groupq signed (a JSON parser would hand over an
// object, and the same JSON encoded again is not what was signed); createHandler and
// createOutcomeHandler take them with the headers as `{ headers, body }` and answer
// `{ status, headers, body }`, sent as it is. Listen with `app.listen(8790)`.
import express, { type RequestHandler } from 'express';
import { type Endpoint, createHandler, createOutcomeHandler } from 'groupq/receiver';
import { countWords, handlerOptions, recordOutcome } from './job';

const handle = createHandler(countWords, handlerOptions());
const takeOutcome = createOutcomeHandler(recordOutcome, handlerOptions());

// Only these routes take the raw body; the rest of the app may keep express.json(). The limit
// is the kit's maxBodyBytes (1 MiB): express.raw() reads 100 kB by default, less than a job may carry.
const rawBody = express.raw({ type: () => true, limit: '1mb' });

/** A route handing the raw request to `endpoint`, and its answer back as it is. */
function route(endpoint: Endpoint): RequestHandler {
  return async (req, res) => {
    // No body at all leaves req.body unset: an empty one fails the signature check (401).
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await endpoint({ headers: req.headers, body });
    res.status(answer.status).set(answer.headers).send(answer.body);
  };
}

export const app = express();
app.post('/jobs', rawBody, route(handle));
// The queue's (or a job's) callbackUrl: https://<this app>/outcomes.
app.post('/outcomes', rawBody, route(takeOutcome));
