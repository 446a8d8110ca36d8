// GET /metrics: every queue's figures in the Prometheus text format (docs/metrics.md), for the
// admin token or GROUPQ_METRICS_TOKEN (a token that opens this route alone, for a scraper).
// Two families' HELP (groupq_jobs, groupq_jobs_completed_total) name the dashboard's overview,
// where the same queues are shown live; the rest only say what they count.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { timingSafeEqual } from 'hono/utils/buffer';
import { HISTOGRAM_BOUNDS_MS, type PartFigures, type Totals, scrape } from '../core/engine/scrape';
import { type Family, type Labels, PROMETHEUS_CONTENT_TYPE, prometheusText } from '../protocol/prometheus';
import { adminAuth, bearerOf } from './middleware/auth';
import type { AppEnv } from './scope';

const BOUNDS_SECONDS = HISTOGRAM_BOUNDS_MS.map((ms) => ms / 1000);

const labelsOf = (part: PartFigures): Labels => ({ queue: part.queue, partition: String(part.partition ?? 0) });

function families(parts: PartFigures[], now: number, overview: string): Family[] {
  type Value = (part: PartFigures) => number | null;
  // A gauge with one series per part, or several (`series`: the labels each adds, and its value).
  const gauge = (name: string, help: string, series: Value | [Labels, Value][]): Family => ({
    name,
    help,
    type: 'gauge',
    samples: parts.flatMap((part) =>
      (typeof series === 'function' ? ([[{}, series]] as [Labels, Value][]) : series).flatMap(([extra, read]) => {
        const figure = read(part);
        return figure === null ? [] : [{ labels: { ...labelsOf(part), ...extra }, value: figure }];
      }),
    ),
  });
  const counter = (name: string, help: string, total: keyof Totals): Family => ({
    name,
    help,
    type: 'counter',
    // A copy written before a total existed (`expired`) lacks it until its queue is read again.
    samples: parts.map((part) => ({ labels: labelsOf(part), value: part.totals[total] ?? 0 })),
  });
  const histogram = (name: string, help: string, pick: (part: PartFigures) => PartFigures['wait']): Family => ({
    name,
    help,
    type: 'histogram',
    samples: parts.map((part) => {
      const { counts, sumMs } = pick(part);
      return { labels: labelsOf(part), bounds: BOUNDS_SECONDS, counts, sum: sumMs / 1000 };
    }),
  });
  return [
    gauge('groupq_jobs', `Jobs by state: waiting, delayed, active. Overview: ${overview}`, [
      [{ state: 'waiting' }, (part) => (part.live === null ? null : Math.max(0, part.live - part.active - part.delayed))],
      [{ state: 'delayed' }, (part) => part.delayed],
      [{ state: 'active' }, (part) => part.active],
    ]),
    gauge('groupq_groups', 'Groups holding jobs: ready, held (a backoff, a hold, paused) or leased.', (part) => part.groups),
    gauge('groupq_groups_paused', 'Paused groups.', (part) => part.pausedGroups),
    gauge('groupq_queue_paused', '1 while the queue is paused.', (part) => (part.paused ? 1 : 0)),
    counter('groupq_jobs_added_total', 'Jobs added: enqueued, run by a repeat, or retried by hand after they ended.', 'added'),
    counter('groupq_jobs_completed_total', `Jobs completed. Overview: ${overview}`, 'completed'),
    counter('groupq_jobs_failed_total', 'Jobs failed for good (their last attempt failed, or failed without retry).', 'failed'),
    counter('groupq_attempts_retried_total', 'Attempts that failed and left their job waiting for a retry.', 'retried'),
    counter('groupq_jobs_cancelled_total', 'Jobs cancelled.', 'cancelled'),
    counter('groupq_jobs_expired_total', 'Jobs that did not start by their deadline (ttlMs) and ended expired.', 'expired'),
    counter('groupq_attempts_throttled_total', "Answers 429 that held a job back without using an attempt.", 'throttled'),
    counter('groupq_outcome_callbacks_delivered_total', 'Outcome callbacks delivered.', 'callbacksDelivered'),
    counter('groupq_outcome_callback_attempts_failed_total', 'Outcome callback attempts that failed.', 'callbackAttemptsFailed'),
    counter('groupq_outcome_callbacks_abandoned_total', 'Outcome callbacks given up after their last attempt.', 'callbacksAbandoned'),
    histogram('groupq_wait_seconds', 'From when a job was due (enqueued, or its runAt) to the start of each attempt.', (part) => part.wait),
    histogram('groupq_run_seconds', "From an attempt's start to its end (an answer, or its lease running out).", (part) => part.run),
    gauge('groupq_figures_age_seconds', 'How long ago these figures were read from the queue: a scrape reads a bounded number of queues.', (part) =>
      Math.max(0, (now - part.at) / 1000),
    ),
  ];
}

/** A scraper's own token (GROUPQ_METRICS_TOKEN) opens this route alone; anything else goes through the admin check. */
export const metricsAuth = createMiddleware<AppEnv>(async function metricsAuth(c, next) {
  const token = bearerOf(c);
  const metricsToken = c.var.settings.metricsToken;
  if (token !== null && metricsToken !== null && (await timingSafeEqual(token, metricsToken))) return next();
  return adminAuth(c, next);
});

export async function prometheusMetrics(c: Context<AppEnv>) {
  const parts = await scrape(c.var.ctx);
  const origin = c.var.settings.publicUrl ?? new URL(c.req.url).origin;
  c.header('content-type', PROMETHEUS_CONTENT_TYPE);
  return c.body(prometheusText(families(parts, Date.now(), `${origin}/dashboard/`)));
}
