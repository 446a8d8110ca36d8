// A groupq endpoint on AWS Lambda behind an API Gateway HTTP API (payload format 2.0) or a
// function URL: the event's headers and body go to createHandler as `{ headers, body }` (a body
// sent base64 decoded back to its bytes), and its `{ status, headers, body }` is the result.
// Lambda freezes the function once it returned: a job answered 202 would not heartbeat until the
// next invocation, so keep jobs within the queue's timeoutMs (and under API Gateway's 30 s limit),
// and the function's own timeout above it.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createHandler } from 'groupq/receiver';
import { countWords, handlerOptions } from './job';

const handle = createHandler(countWords, handlerOptions());

export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const body = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64') : (event.body ?? '');
  const answer = await handle({ headers: event.headers, body });
  return { statusCode: answer.status, headers: answer.headers, body: answer.body };
}
