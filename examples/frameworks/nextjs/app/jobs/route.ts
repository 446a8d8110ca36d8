// A groupq endpoint as a Next.js route handler (App Router: app/jobs/route.ts). A route handler
// gets a Web Request and answers a Response, which is createHandler's own contract: nothing to
// adapt. The request's body must not be read before (request.json() would spend it).
import { createHandler } from 'groupq/receiver';
import { countWords, handlerOptions } from '../../../job';

// The Node.js runtime ('edge' works too: the kit needs only Web Crypto); never cached or prerendered.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

// A job that would outlive groupq's wait is answered 202 and ends in the background: on Next.js
// 15 and later, pass `waitUntil: after` (import { after } from 'next/server') so that the
// platform keeps the function alive until its callbacks are sent.
const handle = createHandler(countWords, handlerOptions());

export async function POST(request: Request): Promise<Response> {
  return handle(request);
}
