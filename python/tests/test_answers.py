"""How a run's end is answered synchronously, offline: what groupq reads from each answer
(docs/delivery.md's table) for a value, None, an error, NonRetryableError, RetryAfterError and a
result that is not JSON."""

from __future__ import annotations

import unittest

from groupq import NonRetryableError, RetryAfterError
from groupq.receiver import answer_of


class AnswerTest(unittest.TestCase):
    def test_a_value_is_200_with_its_json_and_none_an_empty_200(self) -> None:
        self.assertEqual(answer_of(True, {"a": [1, 2]}), (200, [("content-type", "application/json")], b'{"a":[1,2]}'))
        self.assertEqual(answer_of(True, None), (200, [], b""))

    def test_an_error_is_500_with_its_text_marked_as_it_asks(self) -> None:
        status, headers, body = answer_of(False, RuntimeError("broke"))
        self.assertEqual((status, body, dict(headers).get("groupq-retry")), (500, b"broke", None))
        self.assertEqual(dict(answer_of(False, NonRetryableError("no"))[1])["groupq-retry"], "false")
        # Whole seconds, rounded up.
        self.assertEqual(dict(answer_of(False, RetryAfterError(1500))[1])["retry-after"], "2")
        self.assertEqual(answer_of(False, ValueError())[2], b"ValueError")

    def test_a_result_that_is_not_json_fails_the_job_for_good(self) -> None:
        status, headers, body = answer_of(True, {"when": object()})
        self.assertEqual((status, dict(headers)["groupq-retry"]), (500, "false"))
        self.assertTrue(body.startswith(b"the result is not JSON"))

    def test_retry_after_takes_a_finite_delay_only(self) -> None:
        with self.assertRaises(ValueError):
            RetryAfterError(float("inf"))
        with self.assertRaises(ValueError):
            RetryAfterError(-1)


if __name__ == "__main__":
    unittest.main()
