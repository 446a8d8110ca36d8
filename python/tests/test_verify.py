"""The delivery checks on their own, offline: messages signed here as groupq signs them, then
refused or accepted for each rule of docs/delivery.md#verifying-the-signature (the signature
over the raw body, the tolerance, rotation, the kind, replays, the cost caps)."""

from __future__ import annotations

import base64
import json
import unittest

from groupq import DeliveryVerificationError, Verifier, sign, verify_delivery, verify_outcome

SECRET = "whsec_" + base64.b64encode(b"python-kit-test-secret-0123456789").decode()
NEXT = "whsec_" + base64.b64encode(b"python-kit-next-secret-9876543210").decode()
NOW = 1_764_057_600

DELIVERY = {
    "id": "q3VbO1kM0xLh2a9c", "queue": "emails", "group": "user:42", "data": {"n": 1}, "attempt": 1, "maxAttempts": 3,
    "orderMs": NOW * 1000, "createdAt": NOW * 1000, "lease": {"token": "9f2c4e1a7b3d5c60", "expiresAt": NOW * 1000 + 35_000},
    "callbacks": {name: f"http://127.0.0.1:1/{name}" for name in ("heartbeat", "progress", "complete", "fail")},
}


def message(webhook_id: str = "msg_" + "a" * 32, body: dict | None = None, ts: int = NOW, secrets: tuple[str, ...] = (SECRET,)) -> tuple[dict, bytes]:
    raw = json.dumps(body or DELIVERY).encode()
    signature = " ".join(sign(secret, webhook_id, ts, raw) for secret in secrets)
    return {"webhook-id": webhook_id, "webhook-timestamp": str(ts), "webhook-signature": signature}, raw


def refusal(verify, headers: dict, body: bytes) -> str:
    with unittest.TestCase().assertRaises(DeliveryVerificationError) as caught:
        verify(headers, body)
    return caught.exception.reason


class VerifyTest(unittest.TestCase):
    def verifier(self, **options) -> Verifier:
        # A memory of its own per test: the replay test must not see the other tests' deliveries.
        seen: set[str] = set()

        def remember(key: str, webhook_id: str, ts: int) -> bool:
            again = key in seen
            seen.add(key)
            return again

        return Verifier(SECRET, options.pop("next_secret", None), seen=remember, now=lambda: NOW, **options)

    def test_a_genuine_delivery_is_its_parsed_body(self) -> None:
        self.assertEqual(self.verifier()(*message()), DELIVERY)

    def test_header_names_are_read_whatever_their_case(self) -> None:
        headers, body = message()
        self.assertEqual(self.verifier()({name.title(): value for name, value in headers.items()}, body)["id"], DELIVERY["id"])

    def test_a_changed_body_or_another_secret_is_refused(self) -> None:
        headers, body = message()
        self.assertEqual(refusal(self.verifier(), headers, body.replace(b'"n": 1', b'"n": 2')), "bad_signature")
        self.assertEqual(refusal(self.verifier(), *message(secrets=(NEXT,))), "bad_signature")

    def test_either_secret_verifies_while_rotating(self) -> None:
        rotating = Verifier(SECRET, NEXT, now=lambda: NOW, seen=lambda *a: False)
        self.assertEqual(rotating(*message(secrets=(NEXT,)))["id"], DELIVERY["id"])
        self.assertEqual(rotating(*message(secrets=(SECRET,)))["id"], DELIVERY["id"])
        # groupq sends both while it rotates: the endpoint on the new secret alone takes it.
        moved = Verifier(NEXT, now=lambda: NOW, seen=lambda *a: False)
        self.assertEqual(moved(*message(secrets=(SECRET, NEXT)))["id"], DELIVERY["id"])

    def test_a_timestamp_more_than_five_minutes_off_either_way_is_refused(self) -> None:
        self.assertEqual(refusal(self.verifier(), *message(ts=NOW - 301)), "timestamp_out_of_tolerance")
        self.assertEqual(refusal(self.verifier(), *message(ts=NOW + 301)), "timestamp_out_of_tolerance")
        self.assertEqual(self.verifier()(*message(ts=NOW - 300))["id"], DELIVERY["id"])

    def test_missing_headers_are_named(self) -> None:
        headers, body = message()
        del headers["webhook-signature"]
        with self.assertRaisesRegex(DeliveryVerificationError, "missing header: webhook-signature"):
            self.verifier()(headers, body)

    def test_an_outcome_callback_is_no_delivery_and_a_delivery_no_outcome(self) -> None:
        outcome = {"id": "j1", "queue": "emails", "group": "g", "state": "completed", "attempts": 1, "finishedAt": NOW * 1000}
        headers, body = message("out_" + "b" * 32, outcome)
        with self.assertRaisesRegex(DeliveryVerificationError, "a groupq outcome callback .* not a groupq delivery") as caught:
            self.verifier()(headers, body)
        self.assertEqual(caught.exception.reason, "wrong_kind")
        self.assertEqual(verify_outcome(headers, body, SECRET, now=lambda: NOW)["state"], "completed")
        self.assertEqual(refusal(lambda h, b: verify_outcome(h, b, SECRET, now=lambda: NOW), *message()), "wrong_kind")

    def test_a_batch_sent_to_a_delivery_endpoint_names_what_takes_it(self) -> None:
        batch = {"id": "b1", "queue": "emails", "group": "g", "jobs": [DELIVERY]}
        with self.assertRaisesRegex(DeliveryVerificationError, "verify_batch"):
            self.verifier()(*message("bat_" + "c" * 32, batch))

    def test_a_copy_is_a_replay_and_a_retry_is_not(self) -> None:
        verify = self.verifier()
        headers, body = message()
        verify(headers, body)
        self.assertEqual(refusal(verify, headers, body), "replayed")
        retried = {**DELIVERY, "attempt": 2, "lease": {"token": "0123456789abcdef", "expiresAt": NOW * 1000 + 40_000}}
        self.assertEqual(verify(*message(body=retried, ts=NOW + 1))["attempt"], 2)

    def test_the_process_memory_refuses_a_replay_by_default(self) -> None:
        headers, body = message("msg_" + "d" * 32)
        verify_delivery(headers, body, SECRET, now=lambda: NOW)
        self.assertEqual(refusal(lambda h, b: verify_delivery(h, b, SECRET, now=lambda: NOW), headers, body), "replayed")

    def test_what_a_request_costs_is_capped(self) -> None:
        headers, body = message()
        self.assertEqual(refusal(self.verifier(max_body_bytes=len(body) - 1), headers, body), "body_too_large")
        # Only the first 4 entries are looked at: a valid signature fifth is never reached.
        junk = " ".join(["v1," + base64.b64encode(bytes(32)).decode()] * 4)
        headers["webhook-signature"] = f"{junk} {headers['webhook-signature']}"
        with self.assertRaisesRegex(DeliveryVerificationError, "only the first 4 entries"):
            self.verifier()(headers, body)

    def test_a_malformed_secret_is_refused_at_once(self) -> None:
        with self.assertRaisesRegex(ValueError, "at least 16 bytes"):
            Verifier("whsec_" + base64.b64encode(b"short").decode())
        with self.assertRaisesRegex(ValueError, "base64"):
            Verifier("whsec_not base64!")


if __name__ == "__main__":
    unittest.main()
