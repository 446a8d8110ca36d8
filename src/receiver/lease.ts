// Holds one delivery's lease on the receiver's side: the job function's context (signal,
// progress, heartbeat), heartbeats in the background once the job runs asynchronously (at a third
// of the lease that remains, rescheduled from each answer), and the final complete or fail. A
// callback answered 409 means the lease is gone (lost, or the job cancelled): the signal aborts
// and nothing more is sent. A batch's jobs share one lease: one Lease holds it, through calls
// that go to the first job not yet ended (batchCalls in callbacks.ts).
import { type Delivery, LEASE_GRACE_MS } from '../protocol/delivery-body';
import { CallbackError, DAY_MS, type FailBody, type LeaseCalls } from './callbacks';
import { LeaseLostError } from './errors';
import type { TraceContext } from './trace';

/** What a job function gets besides the job. */
export interface JobContext {
  /**
   * Aborts when the lease is lost (reason: LeaseLostError), the job cancelled (JobCancelledError,
   * learned at the next heartbeat) - either way the result would not be recorded - or the
   * handler's maxDurationMs has passed (reason: MaxDurationError).
   */
  signal: AbortSignal;
  /** 1-based number of this attempt. */
  attempt: number;
  maxAttempts: number;
  /** True when a failure now fails the job for good. */
  isLastAttempt: boolean;
  /** When the lease ends unless heartbeated (epoch ms); heartbeats move it. */
  readonly leaseExpiresAt: number;
  /** Reports progress, shown on the job: a number 0-100 or a small JSON object. */
  progress(value: unknown): Promise<void>;
  /**
   * Extends the lease to now + `extendMs` (default: the job's timeoutMs). Asynchronous jobs are
   * heartbeated automatically; call this to extend further ahead.
   */
  heartbeat(extendMs?: number): Promise<{ expiresAt: number }>;
  /**
   * The W3C traceparent the job was enqueued with (docs/tracing.md), for the function's span to
   * continue the producer's trace; undefined when the producer sent none.
   */
  traceparent: string | undefined;
  /** The tracestate that came with it; undefined when none. */
  tracestate: string | undefined;
  /**
   * The id of the groupq request or cron run that pushed this delivery (its groupq-request-id
   * header): the Worker's log lines about it carry the same (docs/logs.md). Undefined when absent.
   */
  requestId: string | undefined;
}

/** How a job's run ended, as the complete or fail callback reports it. */
export type RunEnd = { kind: 'complete'; result: unknown } | ({ kind: 'fail' } & FailBody);

export interface LeaseOptions {
  now: () => number;
  /** Where background trouble goes (a heartbeat that kept failing, a complete that could not land). */
  onError: (error: unknown) => void;
  /** The delivery's webhook-timestamp in seconds: bounds the lease's length against clock skew. */
  sentAtSec: number;
  /** The delivery's trace context (its headers, checked). @default none */
  trace?: TraceContext;
  /** The delivery's groupq-request-id, checked. @default none */
  requestId?: string;
}

/** A heartbeat never waits less than this, so a lease near its end is not hammered. */
const MIN_HEARTBEAT_DELAY_MS = 100;

export class Lease {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private expiresAt: number;
  /** The longest the delivered lease can run: caps `expiresAt - now` when our clock is behind. */
  private readonly maxLengthMs: number;
  /** At most the job's timeoutMs, which a heartbeat without extendMs extends by. */
  private readonly timeoutMs: number;
  /**
   * Once a heartbeat answered: when the lease ends by our own clock (the heartbeat's send time
   * plus its extension), so a clock ahead of groupq's cannot make it look over (and heartbeats
   * then go out every 100 ms) and one behind cannot make it look longer.
   */
  private endsAt: number | undefined;
  /** The extension the job function last asked for; background heartbeats keep asking for it. */
  private extendMs: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Heartbeats on their way: finish() lets them land first. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private keeping = false;
  private finished = false;

  constructor(
    private readonly delivery: Delivery<unknown>,
    private readonly calls: LeaseCalls,
    private readonly options: LeaseOptions,
  ) {
    this.signal = this.controller.signal;
    this.expiresAt = delivery.lease.expiresAt;
    // Measured on the sender's clock alone (its timestamp, truncated to seconds, and its
    // expiresAt), so this is an upper bound of the lease's length whatever our clock says.
    this.maxLengthMs = Math.max(0, delivery.lease.expiresAt - options.sentAtSec * 1000);
    // The lease began before the delivery was signed, at most 999 ms after the truncated timestamp.
    this.timeoutMs = Math.max(0, this.maxLengthMs - 999 - LEASE_GRACE_MS);
  }

  get lost(): boolean {
    return this.signal.aborted;
  }

  /** Milliseconds of lease left, by our clock, never more than the lease can be long. */
  remainingMs(): number {
    const now = this.options.now();
    if (this.endsAt !== undefined) return this.endsAt - now;
    return Math.min(this.expiresAt - now, this.maxLengthMs);
  }

  /** The job function's context; `signal` defaults to the lease's own. */
  context(signal: AbortSignal = this.signal): JobContext {
    const { attempt, maxAttempts } = this.delivery;
    const lease = this;
    return {
      signal,
      attempt,
      maxAttempts,
      isLastAttempt: attempt >= maxAttempts,
      traceparent: this.options.trace?.traceparent,
      tracestate: this.options.trace?.tracestate,
      requestId: this.options.requestId,
      get leaseExpiresAt() {
        return lease.expiresAt;
      },
      progress: (value) => {
        const sent = this.guard(this.calls.progress(value));
        // Progress is often sent without await: a refusal must not surface as an unhandled
        // rejection (that ends a Node process); whoever awaits it still gets the error.
        sent.catch(() => {});
        return sent;
      },
      heartbeat: (extendMs) => {
        if (extendMs !== undefined) this.extendMs = extendMs;
        return this.heartbeat();
      },
    };
  }

  /** Starts heartbeating in the background until finish(); for jobs answered with 202. */
  keepAlive(): void {
    if (this.keeping || this.finished) return;
    this.keeping = true;
    this.schedule();
  }

  /** Stops the heartbeats, then reports how the run ended unless the lease is gone. */
  async finish(end: RunEnd): Promise<void> {
    if (await this.stop()) await this.report(end);
  }

  /** Stops the heartbeats and lets those on their way land; true while the lease is still held. */
  async stop(): Promise<boolean> {
    this.finished = true;
    clearTimeout(this.timer);
    // A heartbeat still on its way could land after complete and read as a lost lease.
    await Promise.allSettled([...this.inFlight]);
    return !this.lost;
  }

  /**
   * Sends the complete or fail callback of `end`, heartbeats or not (a batch ends its jobs one
   * by one while they go on); true when it landed as `end` says. A lost lease aborts the signal,
   * other trouble goes to onError.
   */
  async report(end: RunEnd): Promise<boolean> {
    try {
      if (end.kind === 'complete') return await this.completeOrExplain(end.result);
      await this.calls.fail(end);
      return true;
    } catch (error) {
      if (error instanceof LeaseLostError) this.lose(error);
      else this.options.onError(error);
      return false;
    }
  }

  /** Completes with `result`; false when groupq could not take it and the job was failed instead. */
  private async completeOrExplain(result: unknown): Promise<boolean> {
    // A result groupq cannot take (not JSON, too large) will not fit on the next attempt either:
    // fail the job for good, saying why, rather than let the lease run out and retry.
    try {
      JSON.stringify(result);
    } catch (error) {
      await this.calls.fail({ error: `the result is not JSON: ${(error as Error).message}`, retry: false });
      return false;
    }
    try {
      await this.calls.complete(result);
      return true;
    } catch (error) {
      if (!(error instanceof CallbackError) || error.status >= 500) throw error;
      await this.calls.fail({ error: `the result was not accepted: ${error.message}`, retry: false });
      return false;
    }
  }

  private heartbeat(): Promise<{ expiresAt: number }> {
    const extendMs = this.extendMs;
    const sentAt = this.options.now();
    const call = this.guard(this.calls.heartbeat(extendMs)).then(({ expiresAt }) => {
      // groupq's answer is the lease now, even when it is shorter than before.
      this.expiresAt = expiresAt;
      this.endsAt = sentAt + Math.min(extendMs ?? this.timeoutMs, DAY_MS);
      if (this.keeping && !this.finished) this.schedule();
      return { expiresAt };
    });
    this.inFlight.add(call);
    const forget = () => this.inFlight.delete(call);
    call.then(forget, forget);
    return call;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.lost || this.finished) return;
    const delay = Math.max(MIN_HEARTBEAT_DELAY_MS, this.remainingMs() / 3);
    this.timer = setTimeout(() => {
      this.heartbeat().catch((error: unknown) => {
        if (this.lost || this.finished) return;
        // Not a lost lease (that aborted already): say so, and try again while time is left.
        this.options.onError(error);
        this.schedule();
      });
    }, delay);
  }

  /** Passes a callback's answer through; a 409 marks the lease lost on the way. */
  private async guard<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      if (error instanceof LeaseLostError) this.lose(error);
      throw error;
    }
  }

  private lose(error: LeaseLostError): void {
    clearTimeout(this.timer);
    if (!this.lost) this.controller.abort(error);
  }
}
