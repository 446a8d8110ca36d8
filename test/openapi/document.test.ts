// The OpenAPI document itself: built from today's sources, accepted by standard validators, and
// in step with the routes Hono serves (both ways).
import { Validator } from '@seriousme/openapi-schema-validator';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { app } from '../../src/handlers/app';
import { eventSchemaName, openApiDocument } from '../../src/protocol/api/openapi';
import { STREAM_EVENT_NAMES } from '../../src/protocol/events';
import generated from '../../src/protocol/api/openapi.generated.json';
import { OPERATIONS } from '../../src/handlers/operations';
import { version } from '../../package.json';

type Paths = Record<string, Record<string, { operationId: string }>>;

describe('the generated document', () => {
  it('is what src/protocol builds today (npm run build:openapi)', () => {
    expect(generated).toEqual(openApiDocument(version, OPERATIONS));
  });

  it('is valid OpenAPI 3.1 for @seriousme/openapi-schema-validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(generated));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it("passes Redocly's recommended lint rules, but two", () => {
    // Skipped: no-path-trailing-slash (the dashboard is served at /dashboard and /dashboard/, and
    // both routes are listed), operation-4xx-response (the open pages answer no 4xx of their own).
    const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
    const out = execFileSync(
      process.execPath,
      [cli, 'lint', 'src/protocol/api/openapi.generated.json', '--skip-rule=no-path-trailing-slash', '--skip-rule=operation-4xx-response', '--format=summary'],
      { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    expect(out).not.toMatch(/warning|error/i);
  });

  it('lists every route Hono serves, and serves every path it lists', () => {
    // Hono's routes, paths in OpenAPI form: middleware (`use`, method ALL) left out, and one
    // entry per route (Hono lists each handler of a route, its adminAuth included).
    const served = [
      ...new Set(app.routes.filter((route) => route.method !== 'ALL').map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`)),
    ];
    const documented = Object.entries(generated.paths as Paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect([...served].sort()).toEqual([...documented].sort());
  });

  it("describes both streams' events: each event's data a component, the 200s a oneOf of them all", () => {
    const doc = generated as unknown as { paths: Record<string, any>; components: { schemas: Record<string, unknown> } };
    const components = STREAM_EVENT_NAMES.map(eventSchemaName);
    expect(components).toEqual(['JobAdded', 'JobActive', 'JobProgress', 'JobRetrying', 'JobCompleted', 'JobFailed', 'JobCancelled', 'JobExpired', 'Gap']);
    for (const name of components) expect(doc.components.schemas[name], name).toBeDefined();
    for (const path of ['/v1/queues/{queue}/events', '/v1/queues/{queue}/jobs/{id}/events']) {
      const ok = doc.paths[path].get.responses['200'];
      expect(Object.keys(ok.content), path).toEqual(['text/event-stream']);
      expect(ok.content['text/event-stream'].schema.oneOf, path).toEqual(components.map((name) => ({ $ref: `#/components/schemas/${name}` })));
      // The framing is said in words, with which data each name carries.
      for (const name of STREAM_EVENT_NAMES) expect(ok.description, path).toContain(`| ${name} | ${eventSchemaName(name)} |`);
    }
  });

  it('names each operation once', () => {
    const ids = OPERATIONS.map((op) => op.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
