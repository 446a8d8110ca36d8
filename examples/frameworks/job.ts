// The job every recipe here runs, and the handler options they share: count the words of
// `data.text`. The secret is the one groupq signs with (the queue's signingSecret, else the
// deployment's GROUPQ_SIGNING_SECRET), read from the environment when a recipe is loaded. And
// the outcome function express.ts takes outcome callbacks with, signed with the same secret.
import { type Delivery, type HandlerOptions, NonRetryableError, type OutcomeCallback, type OutcomeRequest } from 'groupq/receiver';

export interface WordsJob {
  text?: unknown;
}

/** Answered with the job's result, which groupq stores. */
export async function countWords(job: Delivery<WordsJob>): Promise<{ words: number; attempt: number }> {
  if (typeof job.data.text !== 'string') {
    // Retrying cannot fix the data: fail the job now.
    throw new NonRetryableError('data.text must be a string');
  }
  return { words: job.data.text.split(/\s+/).filter(Boolean).length, attempt: job.attempt };
}

/**
 * The options of createHandler every recipe passes (and of createOutcomeHandler): the secret
 * and, while rotating, the next one.
 */
export function handlerOptions(): HandlerOptions<WordsJob> {
  const secret = process.env.GROUPQ_SIGNING_SECRET;
  if (!secret) throw new Error('set GROUPQ_SIGNING_SECRET to the whsec_... secret groupq signs with');
  return { secret, nextSecret: process.env.GROUPQ_SIGNING_SECRET_NEXT || undefined };
}

/** The outcomes taken, by webhook-id: a stand-in for a table keyed by it. */
export const outcomes = new Map<string, OutcomeCallback>();

/**
 * Takes a job's outcome once. An outcome may come more than once (a retry after an answer that
 * got lost), always under one webhook-id: a second copy does nothing.
 */
export function recordOutcome(outcome: OutcomeCallback, { webhookId }: OutcomeRequest): void {
  if (outcomes.has(webhookId)) return;
  outcomes.set(webhookId, outcome);
}
