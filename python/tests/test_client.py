"""The client against the real stack: enqueue one job and a batch, read, cancel, the typed
errors of the API's one error shape and of no answer, and retries made safe by ids: an enqueue
whose answer was lost is resent and makes one job (the resend answers `duplicate: True`)."""

from __future__ import annotations

import unittest

from groupq import Client, GroupqError
from support import ADMIN_TOKEN, URL, needs_stack, queue_name, serve_swallowing_proxy


@needs_stack
class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = Client(URL, ADMIN_TOKEN)
        self.queue = self.client.queue(queue_name("client"))
        # Paused: the jobs stay waiting, where the test reads them.
        self.queue.configure({"endpoint": "http://127.0.0.1:9/jobs", "keepCompleted": 10})
        self.client.request("POST", f"{self.queue.base}/pause", idempotent=True)

    def test_add_gives_each_job_an_id_and_a_known_id_writes_nothing(self) -> None:
        first = self.queue.add({"group": "user:42", "data": {"to": "ada@example.com"}})
        self.assertEqual(first["state"], "waiting")
        self.assertEqual(len(first["id"]), 16)
        self.assertFalse(first["id"].startswith("-"))
        job = self.queue.get_job(first["id"])
        self.assertEqual((job["group"], job["data"], job["state"]), ("user:42", {"to": "ada@example.com"}, "waiting"))
        mine = self.queue.add({"group": "user:7", "id": "receipt-7-1", "data": 1})
        again = self.queue.add({"group": "user:7", "id": "receipt-7-1", "data": 2})
        self.assertEqual((mine["id"], mine.get("duplicate")), ("receipt-7-1", None))
        self.assertEqual((again["id"], again["duplicate"]), ("receipt-7-1", True))
        self.assertEqual(self.queue.get_job("receipt-7-1")["data"], 1)

    def test_add_batch_answers_each_job_in_order(self) -> None:
        answers = self.queue.add_batch([
            {"group": "user:7", "id": "b-1", "data": 1},
            {"group": "user:7", "id": "b-2", "data": 2, "delayMs": 60_000},
            {"group": "user:8", "data": 3},
        ])
        self.assertEqual([a["state"] for a in answers], ["waiting", "delayed", "waiting"])
        self.assertEqual([a["id"] for a in answers[:2]], ["b-1", "b-2"])
        self.assertEqual(self.queue.get_job(answers[2]["id"])["data"], 3)
        self.assertEqual(self.queue.get()["counts"]["waiting"], 2)

    def test_cancel_ends_a_job_once(self) -> None:
        added = self.queue.add({"group": "g", "delayMs": 60_000})
        self.assertEqual(self.queue.cancel(added["id"]), {"id": added["id"], "state": "cancelled"})
        self.assertEqual(self.queue.get_job(added["id"])["state"], "cancelled")
        with self.assertRaises(GroupqError) as caught:
            self.queue.cancel_job(added["id"])
        self.assertEqual((caught.exception.status, caught.exception.code), (409, "INVALID_STATE"))

    def test_an_error_answer_is_a_typed_error(self) -> None:
        with self.assertRaises(GroupqError) as caught:
            self.queue.get_job("no-such-job")
        error = caught.exception
        self.assertEqual((error.status, error.code, error.retryable), (404, "JOB_NOT_FOUND", False))
        self.assertTrue(error.request_id)
        with self.assertRaises(GroupqError) as caught:
            self.queue.add({"data": {"no": "group"}})
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "VALIDATION_FAILED"))
        self.assertIsNotNone(caught.exception.details)
        with self.assertRaises(GroupqError) as caught:
            Client(URL, "not-the-token").queue(self.queue.name).get()
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "UNAUTHORIZED"))

    def test_no_answer_is_a_network_error_naming_the_call(self) -> None:
        with self.assertRaises(GroupqError) as caught:
            Client("http://127.0.0.1:9", ADMIN_TOKEN, retries=0).queue("q").get_job("j")
        error = caught.exception
        self.assertEqual((error.status, error.code, error.retryable), (0, "NETWORK_ERROR", True))
        self.assertIn("GET http://127.0.0.1:9/v1/queues/q/jobs/j got no answer", str(error))

    def test_an_enqueue_whose_answer_was_lost_is_resent_and_makes_one_job(self) -> None:
        proxy, handler = serve_swallowing_proxy(swallow=1)
        try:
            answer = Client(proxy.url, ADMIN_TOKEN).queue(self.queue.name).add({"group": "user:9", "data": "once"})
        finally:
            proxy.close()
        # The first send made the job and its answer was lost; the resend found the same id.
        self.assertEqual(handler.forwarded, 2)
        self.assertTrue(answer["duplicate"])
        self.assertEqual(self.queue.get()["counts"]["waiting"], 1)
        self.assertEqual(self.queue.get_job(answer["id"])["data"], "once")

    def test_without_an_id_an_enqueue_is_not_resent(self) -> None:
        proxy, handler = serve_swallowing_proxy(swallow=1)
        try:
            with self.assertRaises(GroupqError) as caught:
                Client(proxy.url, ADMIN_TOKEN, mint_ids=False).queue(self.queue.name).add({"group": "user:9"})
        finally:
            proxy.close()
        self.assertEqual((caught.exception.code, handler.forwarded), ("NETWORK_ERROR", 1))
        self.assertEqual(self.queue.get()["counts"]["waiting"], 1)


if __name__ == "__main__":
    unittest.main()
