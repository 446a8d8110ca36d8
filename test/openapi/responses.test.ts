// Real answers of the Worker (workerd, a real Redis behind the REST bridge, real endpoints)
// against the OpenAPI document: the contract suite (responses-suite.ts) calls every operation,
// its successes and its typical refusals, checks each answer against the document, and asks at
// the end that every operation was seen. test/server/contract.test.ts runs the same suite on the
// Node server.
import { ADMIN_TOKEN } from '../helpers/worker';
import { useHttpSuite } from '../http/support';
import { describeContract } from './responses-suite';

const suite = useHttpSuite();
describeContract(() => ({ url: suite.worker.url, adminToken: ADMIN_TOKEN }));
