// The OpenTelemetry JS SDK on both ends of groupq (docs/tracing.md): a producer starts a span and
// injects its context with the SDK's W3C propagator into `add`'s trace options; the endpoint, a
// real node:http server, extracts the context of the delivery's headers with the same propagator
// and starts its span, as any OpenTelemetry HTTP server instrumentation would. The endpoint's
// span continues the producer's trace, as its child; so does the outcome callback's. The same
// through the receiver kit's `ctx.traceparent`. Spans are read from an in-memory exporter.
import {
  type Context, ROOT_CONTEXT, SpanKind, type TextMapGetter, defaultTextMapGetter, defaultTextMapSetter, trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { GroupqClient } from '../../src/client';
import { createHandler } from '../../src/receiver';
import { ADMIN_TOKEN, SIGNING_SECRET } from '../helpers/worker';
import { type Server, serve } from '../receiver/support';
import { jobInState, putQueue, queueName, useWorker } from './support';

const env = useWorker();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const propagator = new W3CTraceContextPropagator();
afterAll(() => provider.shutdown());

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  exporter.reset();
});

/** node's IncomingHttpHeaders as a carrier: names are lower case, a repeated header an array. */
const nodeHeaders: TextMapGetter<http.IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

/**
 * A node:http server that continues the trace of each request it gets: the context its headers
 * carry, extracted with the SDK's propagator, parents a span named `name`. Answers `status`.
 */
async function tracedServer(name: string, status: number): Promise<{ url: string; requests: number }> {
  const tracer = provider.getTracer('endpoint');
  const state = { url: '', requests: 0 };
  const server = http.createServer((req, res) => {
    const parent = propagator.extract(ROOT_CONTEXT, req.headers, nodeHeaders);
    const span = tracer.startSpan(name, { kind: SpanKind.CONSUMER }, parent);
    req.resume();
    req.on('end', () => {
      state.requests++;
      span.end();
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jobs`;
  return state;
}

/**
 * The producer's span, started under an upstream caller's context that carries a tracestate (so
 * that the tracestate travels too), and what the SDK's propagator injects for it.
 */
function producerSpan(queue: string) {
  const upstream = propagator.extract(
    ROOT_CONTEXT,
    { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'congo=t61rcWkgMzE' },
    defaultTextMapGetter,
  );
  const span = provider.getTracer('producer').startSpan(`publish ${queue}`, { kind: SpanKind.PRODUCER }, upstream);
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(upstream, span), carrier, defaultTextMapSetter);
  return { span, carrier };
}

const finished = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === name);

/** Checks that `child` continues `parent`'s trace as its child. */
function expectChildOf(child: ReadableSpan, parent: ReadableSpan) {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
  expect(child.parentSpanContext?.isRemote).toBe(true);
}

describe('OpenTelemetry, producer to endpoint', () => {
  it("the endpoint's span (and the outcome callback's) continues the producer's trace, as its child", async () => {
    const endpoint = await tracedServer('process', 200);
    const callback = await tracedServer('outcome', 204);
    const q = queueName('otel');
    await putQueue(env.worker, q, { endpoint: endpoint.url, callbackUrl: callback.url, keepCompleted: 10 });
    const client = new GroupqClient({ url: env.worker.url, token: ADMIN_TOKEN });

    const { span, carrier } = producerSpan(q);
    expect(carrier).toEqual({ traceparent: expect.stringMatching(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/), tracestate: 'congo=t61rcWkgMzE' });
    const { id } = await client.queue(q).add({ group: 'g', data: { n: 1 } }, { traceparent: carrier.traceparent, tracestate: carrier.tracestate });
    span.end();

    await jobInState(env.worker, q, id, 'completed');
    await expect.poll(() => finished('outcome').length).toBe(1);
    const [producer] = finished(`publish ${q}`);
    const [processed] = finished('process');
    const [outcome] = finished('outcome');
    expectChildOf(processed!, producer!);
    expectChildOf(outcome!, producer!);
    // The tracestate came through as the producer's SDK sent it.
    expect(processed!.spanContext().traceState?.serialize()).toBe('congo=t61rcWkgMzE');
  });

  it("through the receiver kit: createHandler's ctx.traceparent and ctx.tracestate, extracted the same way", async () => {
    const tracer = provider.getTracer('endpoint');
    const server: Server = await serve(
      createHandler(
        (job, ctx) => {
          const parent: Context = propagator.extract(ROOT_CONTEXT, { traceparent: ctx.traceparent, tracestate: ctx.tracestate }, defaultTextMapGetter);
          tracer.startSpan(`process ${job.queue}`, { kind: SpanKind.CONSUMER }, parent).end();
          return 'done';
        },
        { secret: SIGNING_SECRET },
      ),
    );
    closers.push(() => server.close());
    const q = queueName('otel-kit');
    await putQueue(env.worker, q, { endpoint: server.url, keepCompleted: 10 });
    const client = new GroupqClient({ url: env.worker.url, token: ADMIN_TOKEN });

    const { span, carrier } = producerSpan(q);
    const [added] = await client.queue(q).addBatch([{ group: 'g' }], { traceparent: carrier.traceparent, tracestate: carrier.tracestate });
    span.end();

    await jobInState(env.worker, q, added!.id, 'completed');
    const [producer] = finished(`publish ${q}`);
    const [processed] = finished(`process ${q}`);
    expectChildOf(processed!, producer!);
  });
});
