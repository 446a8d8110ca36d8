// The response schemas against the code that builds the answers, at compile time (tsc checks
// this file; the test itself only runs the assertions' empty bodies): what each engine
// operation returns must be what the document says its route answers. A field the engine adds or
// renames without the schema fails here before any request is made.
import { describe, expectTypeOf, it } from 'vitest';
import type * as z from 'zod';
import type { Engine } from '../../src/core/engine';
import type { QueueConfig } from '../../src/protocol/api/types';
import type { GroupState } from '../../src/protocol/job-input';
import type * as r from '../../src/protocol/api/responses';

type Answer<K extends keyof Engine> = Engine[K] extends (...args: never[]) => Promise<infer T> ? T : never;
type Out<S extends z.ZodType> = z.output<S>;

describe('the response schemas', () => {
  it('describe what each engine operation returns', () => {
    expectTypeOf<{ queues: Answer<'listQueues'> }>().toExtend<Out<typeof r.queueListSchema>>();
    expectTypeOf<Answer<'getQueue'>>().toExtend<Out<typeof r.queueInfoSchema>>();
    expectTypeOf<Answer<'putQueue'>>().toExtend<Out<typeof r.queuePutSchema>>();
    expectTypeOf<Answer<'pauseQueue'>>().toExtend<Out<typeof r.queuePausedSchema>>();
    expectTypeOf<Answer<'resumeQueue'>>().toExtend<Out<typeof r.queuePausedSchema>>();
    expectTypeOf<Answer<'repairQueue'>>().toExtend<Out<typeof r.repairReportSchema>>();
    expectTypeOf<{ minutes: Answer<'getMinutes'> }>().toExtend<Out<typeof r.metricsSchema>>();
    expectTypeOf<Answer<'enqueue'>>().toExtend<Out<typeof r.enqueueResultSchema>>();
    expectTypeOf<{ jobs: Answer<'enqueueBatch'> }>().toExtend<Out<typeof r.batchResultSchema>>();
    expectTypeOf<Answer<'listJobs'>>().toExtend<Out<typeof r.jobPageSchema>>();
    expectTypeOf<Answer<'waitForJob'>>().toExtend<Out<typeof r.jobSchema>>();
    expectTypeOf<Answer<'updateJob'>>().toExtend<Out<typeof r.jobSchema>>();
    expectTypeOf<Answer<'retryJob'>>().toExtend<Out<typeof r.jobSchema>>();
    expectTypeOf<Answer<'promoteJob'>>().toExtend<Out<typeof r.jobSchema>>();
    expectTypeOf<Answer<'cancelJob'>>().toExtend<Out<typeof r.cancelledSchema>>();
    expectTypeOf<Answer<'retryJobs'>>().toExtend<Out<typeof r.bulkResultSchema>>();
    expectTypeOf<Answer<'cleanJobs'>>().toExtend<Out<typeof r.bulkResultSchema>>();
    expectTypeOf<Answer<'heartbeat'>>().toExtend<Out<typeof r.heartbeatResultSchema>>();
    expectTypeOf<Answer<'progress'>>().toExtend<Out<typeof r.progressResultSchema>>();
    expectTypeOf<Answer<'complete'>>().toExtend<Out<typeof r.leaseEndSchema>>();
    expectTypeOf<Answer<'fail'>>().toExtend<Out<typeof r.leaseEndSchema>>();
    expectTypeOf<Answer<'listGroups'>>().toExtend<Out<typeof r.groupPageSchema>>();
    expectTypeOf<Answer<'getGroup'>>().toExtend<Out<typeof r.groupDetailSchema>>();
    expectTypeOf<Answer<'pauseGroup'>>().toExtend<Out<typeof r.groupPausedSchema>>();
    expectTypeOf<Answer<'resumeGroup'>>().toExtend<Out<typeof r.groupPausedSchema>>();
    expectTypeOf<Answer<'setGroupLimits'>>().toExtend<Out<typeof r.groupLimitsResultSchema>>();
    expectTypeOf<{ repeats: Answer<'listRepeats'> }>().toExtend<Out<typeof r.repeatListSchema>>();
    expectTypeOf<Answer<'putRepeat'>>().toExtend<Out<typeof r.repeatPutSchema>>();
  });

  it('are the types the rest of the code writes for the same shapes', () => {
    // The same keys, assignable both ways (so each is optional in both or in neither): zod's output
    // spells some types differently, which toEqualTypeOf tells apart.
    expectTypeOf<keyof r.QueueConfigView>().toEqualTypeOf<keyof QueueConfig>();
    expectTypeOf<r.QueueConfigView>().toExtend<QueueConfig>();
    expectTypeOf<QueueConfig>().toExtend<r.QueueConfigView>();
    expectTypeOf<(typeof r.GROUP_STATES)[number]>().toEqualTypeOf<GroupState>();
  });
});
