"""Checks that a request is a genuine, fresh groupq message, the Standard Webhooks way, as
src/receiver/verify.ts does: an HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<raw body>`
keyed by the `whsec_` secret (or either of two while rotating), a timestamp within 5 minutes
either way, the kind the signed webhook-id names (`msg_` a delivery of one job, `bat_` a batch,
`out_` an outcome callback: none passes as another), the body's shape, and for deliveries and
batches, last, that it is no copy of one accepted before (a replay: same webhook-id, timestamp
and signature; a retry keeps its webhook-id but is signed anew). A request costs at most
`max_body_bytes` read and one HMAC per secret, whatever it holds."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Mapping

from .errors import DeliveryVerificationError

SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_S = 300
DEFAULT_MAX_BODY_BYTES = 1 << 20
# Only the first few entries of webhook-signature are looked at: groupq sends one, two while a
# secret rotates, and a header of thousands then costs no more than one.
MAX_SIGNATURE_ENTRIES = 4
SIGNATURE_BYTES = 32
# Past this many remembered deliveries the oldest is forgotten early (about 15 MB of keys).
MAX_REMEMBERED = 100_000

# Each kind: its webhook-id prefix, its name in messages, the body fields it must carry, and for
# the two forms of delivery what takes the other one (the queue's `batch` and the handler disagree).
KINDS = {
    "delivery": ("msg_", ("id", "queue", "group", "attempt", "maxAttempts", "lease", "callbacks"),
                 "the queue sends one job per delivery (its `batch` is null): take them with verify_delivery"),
    "batch": ("bat_", ("id", "queue", "group", "jobs"),
              "the queue sends batches (its `batch` is set): take them with verify_batch"),
    "outcome callback": ("out_", ("id", "queue", "group", "state", "attempts", "finishedAt"), None),
}

SeenHook = Callable[[str, str, int], bool]


def secret_bytes(secret: str) -> bytes:
    """The key bytes of a secret; the `whsec_` prefix is optional, as in other Standard Webhooks libraries."""
    if not isinstance(secret, str) or secret == "":
        raise ValueError("verifying deliveries needs the signing secret")
    encoded = secret[len(SECRET_PREFIX):] if secret.startswith(SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError('a signing secret is "whsec_" followed by base64') from None
    # A short key is a configuration mistake (an empty env var, a truncated paste): say so early.
    if len(key) < 16:
        raise ValueError("a signing secret holds at least 16 bytes of base64 key material")
    return key


def sign(secret: str, webhook_id: str, timestamp: int | str, body: bytes) -> str:
    """The `v1,<base64>` signature groupq sends for this message (for tests and tools)."""
    digest = hmac.new(secret_bytes(secret), f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def candidate_signatures(header: str) -> tuple[list[bytes], bool]:
    """The 32-byte `v1,` signatures among the header's first entries, and whether entries were left unread."""
    entries = [entry for entry in header.split(" ") if entry != ""]
    found = []
    for entry in entries[:MAX_SIGNATURE_ENTRIES]:
        if not entry.startswith("v1,") or not 43 <= len(entry) - 3 <= 44:
            continue
        try:
            raw = base64.b64decode(entry[3:], validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(raw) == SIGNATURE_BYTES:
            found.append(raw)
    return found, len(entries) > MAX_SIGNATURE_ENTRIES


class Replays:
    """The default replay memory: keys accepted lately, each until its timestamp leaves the
    window (the verifier refuses the request as stale from then on), bounded, thread-safe."""

    def __init__(self) -> None:
        self._until: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def seen(self, key: str, until_s: float, now_s: float) -> bool:
        with self._lock:
            while self._until:
                oldest, until = next(iter(self._until.items()))
                if until >= now_s:
                    break
                del self._until[oldest]
            if key in self._until:
                return True
            if len(self._until) >= MAX_REMEMBERED:
                self._until.popitem(last=False)
            self._until[key] = until_s
            return False


_PROCESS_REPLAYS = Replays()


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value


class Verifier:
    """Checks requests of one kind ("delivery", "batch" or "outcome callback") for `secret`, and
    `next_secret` while rotating. `seen(key, webhook_id, timestamp_s)` answers whether a delivery
    was accepted before, recording it (plug in a shared store, e.g. Redis `SET key 1 NX EX 600`,
    when several processes take deliveries); by default this process's memory. Outcome callbacks
    have no replay check: dedupe them on the webhook-id."""

    def __init__(
        self,
        secret: str,
        next_secret: str | None = None,
        *,
        kind: str = "delivery",
        tolerance_s: int = DEFAULT_TOLERANCE_S,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        seen: SeenHook | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind is one of {', '.join(KINDS)}, got {kind!r}")
        if not (isinstance(tolerance_s, (int, float)) and tolerance_s >= 0):
            raise ValueError("tolerance_s must be a number >= 0")
        if not (isinstance(max_body_bytes, int) and max_body_bytes > 0):
            raise ValueError(f"max_body_bytes must be a whole number of bytes > 0, got {max_body_bytes!r}")
        self.kind = kind
        self.keys = [secret_bytes(s) for s in ([secret, next_secret] if next_secret else [secret])]
        self.tolerance_s = tolerance_s
        self.max_body_bytes = max_body_bytes
        self.now = now
        self.seen = seen

    def __call__(self, headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
        """The parsed body of a genuine message; raises DeliveryVerificationError saying why not.
        `headers`: any mapping of the request's headers; `body`: its raw bytes, as received."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        webhook_id = _header(headers, "webhook-id")
        timestamp = _header(headers, "webhook-timestamp")
        signature = _header(headers, "webhook-signature")
        missing = [name for name, value in (("webhook-id", webhook_id), ("webhook-timestamp", timestamp), ("webhook-signature", signature)) if not value]
        if missing:
            raise DeliveryVerificationError("missing_headers", f"missing header{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
        if not re.fullmatch(r"\d{1,15}", timestamp):
            raise DeliveryVerificationError("bad_timestamp", "webhook-timestamp is not a number of unix seconds")
        offset = int(self.now()) - int(timestamp)
        if abs(offset) > self.tolerance_s:
            direction = "in the past" if offset > 0 else "in the future"
            raise DeliveryVerificationError(
                "timestamp_out_of_tolerance", f"webhook-timestamp is {abs(offset)} s {direction}, more than the {self.tolerance_s} s tolerated"
            )
        given, unread = candidate_signatures(signature)
        note = f" (only the first {MAX_SIGNATURE_ENTRIES} entries of webhook-signature are looked at)" if unread else ""
        if not given:
            raise DeliveryVerificationError("bad_signature", f'webhook-signature holds no "v1,<base64>" signature of 32 bytes{note}')
        if len(body) > self.max_body_bytes:
            raise DeliveryVerificationError("body_too_large", f"the {self.kind} body is over {self.max_body_bytes} bytes")
        # The signature covers the body's exact bytes: never a re-encoded parse.
        signed = f"{webhook_id}.{timestamp}.".encode() + body
        digests = [hmac.new(key, signed, hashlib.sha256).digest() for key in self.keys]
        # Every pair is compared, even after a match: the time taken says nothing of which matched.
        matched = False
        for digest in digests:
            for candidate in given:
                matched = hmac.compare_digest(digest, candidate) or matched
        if not matched:
            which = "signing secrets" if len(self.keys) > 1 else "signing secret"
            raise DeliveryVerificationError("bad_signature", f"no signature matches the {which} (wrong secret, or the body was changed){note}")
        self._check_kind(webhook_id)
        parsed = self._parse(body)
        # The replay key: what only a copy of this very request repeats. The digest under the first
        # secret, so that dropping an entry of a two-secret header does not make a copy look new.
        if self.kind != "outcome callback":
            key = f"{webhook_id}.{timestamp}.{base64.b64encode(digests[0]).decode('ascii')}"
            ts = int(timestamp)
            again = self.seen(key, webhook_id, ts) if self.seen else _PROCESS_REPLAYS.seen(key, ts + self.tolerance_s, self.now())
            if again:
                raise DeliveryVerificationError(
                    "replayed", f"this {self.kind} (webhook-id {webhook_id}, webhook-timestamp {timestamp}) was accepted before: a replayed copy"
                )
        return parsed

    def _check_kind(self, webhook_id: str) -> None:
        prefix, _, taken_by = KINDS[self.kind]
        if webhook_id.startswith(prefix):
            return
        other = next((name for name, spec in KINDS.items() if webhook_id.startswith(spec[0])), None)
        if other is None:
            raise DeliveryVerificationError("wrong_kind", f"webhook-id does not start with {prefix}: not a groupq {self.kind}")
        hint = f": {KINDS[other][2]}" if KINDS[other][2] and taken_by else ""
        raise DeliveryVerificationError("wrong_kind", f"this is a groupq {other} (webhook-id {KINDS[other][0]}...), not a groupq {self.kind}{hint}")

    def _parse(self, body: bytes) -> dict[str, Any]:
        try:
            parsed = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise DeliveryVerificationError("bad_body", f"the {self.kind} body is not JSON") from None
        fields = KINDS[self.kind][1]
        absent = [name for name in fields if not isinstance(parsed, dict) or name not in parsed]
        if absent:
            raise DeliveryVerificationError("bad_body", f"the {self.kind} body is not a groupq {self.kind}: {absent[0]} is missing")
        return parsed


def verify_delivery(headers: Mapping[str, str], body: bytes, secret: str, next_secret: str | None = None, **options: Any) -> dict[str, Any]:
    """Checks a delivery of one job (`msg_`) and returns its body: `{id, queue, group, data,
    attempt, maxAttempts, orderMs, createdAt, lease, callbacks}`. For many requests, make one
    Verifier and call it: the secrets are checked once."""
    return Verifier(secret, next_secret, kind="delivery", **options)(headers, body)


def verify_batch(headers: Mapping[str, str], body: bytes, secret: str, next_secret: str | None = None, **options: Any) -> dict[str, Any]:
    """Checks a batch (`bat_`, a queue with `batch` set) and returns its body `{id, queue, group, jobs}`."""
    return Verifier(secret, next_secret, kind="batch", **options)(headers, body)


def verify_outcome(headers: Mapping[str, str], body: bytes, secret: str, next_secret: str | None = None, **options: Any) -> dict[str, Any]:
    """Checks an outcome callback (`out_`) and returns its body `{id, queue, group, state, result?, error?, attempts, finishedAt}`."""
    return Verifier(secret, next_secret, kind="outcome callback", **options)(headers, body)
