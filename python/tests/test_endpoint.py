"""The receiver as an endpoint of real queues: groupq pushes each job, signed, to a WSGI or an
ASGI app on loopback, which completes it with the function's result, fails and retries it,
fails it for good on NonRetryableError, reports progress and heartbeats from the background, and
stops at a cancel. A forged, mistaken-kind or replayed request runs nothing."""

from __future__ import annotations

import base64
import json
import threading
import time
import unittest
import urllib.error
import urllib.request

from groupq import Client, JobCancelledError, NonRetryableError, asgi_handler, sign, wsgi_handler
from support import ADMIN_TOKEN, QUICK_RETRIES, SIGNING_SECRET, URL, Capture, eventually, needs_stack, queue_name, serve_asgi, serve_wsgi

OTHER_SECRET = "whsec_" + base64.b64encode(b"a-secret-groupq-never-signs-with").decode()


def post(url: str, headers: dict[str, str], body: bytes) -> int:
    req = urllib.request.Request(url, data=body, method="POST", headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req) as res:
            return res.status
    except urllib.error.HTTPError as error:
        return error.code


@needs_stack
class EndpointTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = Client(URL, ADMIN_TOKEN)
        self.served = []

    def tearDown(self) -> None:
        for served in self.served:
            served.close()

    def endpoint_queue(self, app, prefix: str, **config):
        served = serve_wsgi(app) if not getattr(app, "asgi", False) else serve_asgi(app)
        self.served.append(served)
        queue = self.client.queue(queue_name(prefix))
        queue.configure({"endpoint": f"{served.url}/jobs", "keepCompleted": 10, "backoff": QUICK_RETRIES, **config})
        return queue, served

    def test_a_returned_value_completes_the_job_as_its_result(self) -> None:
        app = wsgi_handler(lambda job, ctx: {"sum": sum(job["data"]), "attempt": ctx.attempt}, SIGNING_SECRET)
        queue, _ = self.endpoint_queue(app, "complete")
        job = queue.add_and_wait({"group": "user:1", "data": [1, 2, 3]}, timeout_ms=20_000)
        self.assertEqual((job["state"], job["attempts"], job["result"]), ("completed", 1, {"sum": 6, "attempt": 1}))

    def test_an_exception_fails_the_attempt_and_the_next_one_runs(self) -> None:
        def flaky(job, ctx):
            if ctx.attempt == 1:
                raise RuntimeError("the first try breaks")
            return "second try"

        queue, _ = self.endpoint_queue(wsgi_handler(flaky, SIGNING_SECRET), "retry", maxAttempts=3)
        added = queue.add({"group": "g"})
        job = queue.wait_for_job(added["id"], timeout_ms=30_000)
        self.assertEqual((job["state"], job["attempts"], job["result"]), ("completed", 2, "second try"))
        self.assertEqual([(h["outcome"], h.get("status"), h.get("error")) for h in job["history"]],
                         [("failed", 500, "HTTP 500: the first try breaks"), ("completed", 200, None)])

    def test_non_retryable_error_fails_the_job_at_once(self) -> None:
        def refuse(job, ctx):
            raise NonRetryableError(f"{job['data']['url']} is gone")

        queue, _ = self.endpoint_queue(wsgi_handler(refuse, SIGNING_SECRET), "non-retryable", maxAttempts=3)
        added = queue.add({"group": "g", "data": {"url": "https://example.com/x"}})
        job = queue.wait_for_job(added["id"], timeout_ms=20_000)
        self.assertEqual((job["state"], job["attempts"]), ("failed", 1))
        self.assertIn("https://example.com/x is gone", job["error"])

    def test_in_the_background_progress_heartbeat_and_complete_go_by_callback(self) -> None:
        seen = {}

        def long_job(job, ctx):
            ctx.progress(50)
            seen["expires_at"] = ctx.heartbeat(60_000)
            seen["lease_ms"] = seen["expires_at"] - int(time.time() * 1000)
            return {"done": job["data"]}

        app = wsgi_handler(long_job, SIGNING_SECRET, background=True)
        queue, _ = self.endpoint_queue(app, "background")
        added = queue.add({"group": "g", "data": "big"})
        job = queue.wait_for_job(added["id"], timeout_ms=20_000)
        self.assertEqual((job["state"], job["attempts"], job["result"], job["progress"]), ("completed", 1, {"done": "big"}, 50))
        # The heartbeat moved the lease a minute ahead, past the queue's timeoutMs (30 s).
        self.assertGreater(seen["lease_ms"], 40_000)

    def test_a_cancel_reaches_the_running_job_at_its_next_callback(self) -> None:
        started, go_on, seen = threading.Event(), threading.Event(), {}

        def waits(job, ctx):
            started.set()
            go_on.wait(20)
            try:
                ctx.progress(10)
            except JobCancelledError as error:
                seen["error"] = error
                raise

        queue, _ = self.endpoint_queue(wsgi_handler(waits, SIGNING_SECRET, background=True), "cancel")
        added = queue.add({"group": "g"})
        self.assertTrue(started.wait(20))
        self.assertEqual(queue.cancel(added["id"])["state"], "cancelled")
        go_on.set()
        eventually(lambda: seen.get("error"), what="the job function to hear of the cancel")
        self.assertEqual(queue.get_job(added["id"])["state"], "cancelled")

    def test_an_asgi_app_completes_and_fails_jobs(self) -> None:
        async def job_fn(job, ctx):
            if job["data"] == "bad":
                raise NonRetryableError("bad data")
            return {"echo": job["data"], "group": job["group"]}

        app = asgi_handler(job_fn, SIGNING_SECRET)
        app.asgi = True
        queue, _ = self.endpoint_queue(app, "asgi")
        good = queue.add({"group": "a", "data": "hi", "keepResult": True})
        bad = queue.add({"group": "b", "data": "bad"})
        self.assertEqual(queue.wait_for_job(good["id"], 20_000)["result"], {"echo": "hi", "group": "a"})
        failed = queue.wait_for_job(bad["id"], 20_000)
        self.assertEqual((failed["state"], failed["attempts"], failed["error"]), ("failed", 1, "HTTP 500: bad data"))

    def test_a_rotating_queue_reaches_an_endpoint_on_the_next_secret(self) -> None:
        secret = "whsec_" + base64.b64encode(b"python-kit-queue-secret-00000001").decode()
        next_secret = "whsec_" + base64.b64encode(b"python-kit-queue-secret-00000002").decode()
        app = wsgi_handler(lambda job, ctx: "on the next secret", next_secret)
        queue, _ = self.endpoint_queue(app, "rotate", signingSecret=secret, signingSecretNext=next_secret)
        job = queue.add_and_wait({"group": "g"}, timeout_ms=20_000)
        self.assertEqual((job["state"], job["result"]), ("completed", "on the next secret"))

    def test_a_forged_mistaken_or_replayed_request_runs_nothing(self) -> None:
        runs = []
        captured = Capture(wsgi_handler(lambda job, ctx: runs.append(job["id"]) or "ran", SIGNING_SECRET))
        queue, served = self.endpoint_queue(captured, "forged")
        job = queue.add_and_wait({"group": "g"}, timeout_ms=20_000)
        self.assertEqual((job["state"], runs), ("completed", [job["id"]]))
        headers, body = captured.requests[0]
        webhook = {name: headers[name] for name in ("webhook-id", "webhook-timestamp", "webhook-signature")}
        self.assertTrue(webhook["webhook-id"].startswith("msg_"))

        # The same request again, unchanged: a replay.
        self.assertEqual(post(f"{served.url}/jobs", webhook, body), 409)
        # Another body under the captured signature, or one signed with another secret.
        changed = body.replace(b'"attempt":1', b'"attempt":2')
        self.assertNotEqual(changed, body)
        self.assertEqual(post(f"{served.url}/jobs", webhook, changed), 401)
        ts = str(int(time.time()))
        forged = {"webhook-id": "msg_" + "f" * 32, "webhook-timestamp": ts, "webhook-signature": sign(OTHER_SECRET, "msg_" + "f" * 32, ts, body)}
        self.assertEqual(post(f"{served.url}/jobs", forged, body), 401)
        # Signed with the right secret, but an outcome callback's id: not a delivery.
        outcome = {"webhook-id": "out_" + "e" * 32, "webhook-timestamp": ts, "webhook-signature": sign(SIGNING_SECRET, "out_" + "e" * 32, ts, body)}
        self.assertEqual(post(f"{served.url}/jobs", outcome, body), 401)
        self.assertEqual(post(f"{served.url}/jobs", {}, json.dumps({"id": "x"}).encode()), 401)
        self.assertEqual(runs, [job["id"]])


if __name__ == "__main__":
    unittest.main()
