"""The producer's client for Python, standard library only (urllib): enqueue one job or a batch,
read a job, wait for its end, cancel it; every failure is a GroupqError read from the API's one
error shape. Retries are safe by construction, as in the TypeScript client
(src/client/transport.ts): only a call that does the same when sent twice is resent, and only
when no answer came or the answer was a 503. An enqueue is such a call because every job gets an
id before it is sent (its own, or one made here), so a resend answers `duplicate: true` (G4)."""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import random
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterable, Mapping

from .errors import CODE_OF_STATUS, GroupqError

RETRY_BASE_MS = 100
RETRY_MAX_MS = 2000
# A 503 asking for a longer wait than this is not waited for: the caller gets it at once.
MAX_RETRY_AFTER_MS = 60_000
# The longest one GET of a job may hold its answer (`waitMs`): the server's MAX_WAIT_MS.
MAX_WAIT_MS = 25_000
FINISHED_STATES = frozenset({"completed", "failed", "cancelled", "expired"})


def random_id() -> str:
    """A URL-safe job id, 96 random bits in 16 characters, as the server makes them. Never one
    starting with `-`, which a command line would read as an option."""
    while True:
        text = base64.urlsafe_b64encode(secrets.token_bytes(12)).decode("ascii")
        if not text.startswith("-"):
            return text


def parse_retry_after(value: str | None, now_s: float) -> int | None:
    """A Retry-After header (seconds, or an HTTP date) in ms from now; None when absent or unreadable."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if text.isdigit():
        return int(text) * 1000
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0, round((when.timestamp() - now_s) * 1000))


def error_from_answer(status: int, text: str, headers: Mapping[str, str]) -> GroupqError:
    """Reads `{"error":{code,message,details,requestId}}` from a failed answer, whatever its body holds."""
    retry_after_ms = parse_retry_after(headers.get("retry-after"), time.time())
    request_id = headers.get("x-request-id")
    error: Any = None
    try:
        error = json.loads(text).get("error") if text else None
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str):
        # The header, else the body: a proxy between may drop a header it does not know.
        request_id = request_id or error.get("requestId")
        return GroupqError(error["code"], status, error["message"], error.get("details"), retry_after_ms, request_id)
    code = CODE_OF_STATUS.get(status) or ("INTERNAL" if status >= 500 else f"HTTP_{status}")
    start = text.strip()[:200]
    message = f"HTTP {status}: {start}" if start else f"HTTP {status}"
    return GroupqError(code, status, message, None, retry_after_ms, request_id)


class Client:
    """groupq over HTTP. `url` is the server's origin; `token` the admin token or a queue's
    publish token (enqueue only). `retries`: resends of a safe call after no answer or a 503.
    `timeout_s`: the bound on each attempt. `mint_ids`: give jobs without an id one, so that
    enqueues are resent safely (False: an enqueue without an id is never resent)."""

    def __init__(self, url: str, token: str, *, retries: int = 3, timeout_s: float = 30.0, mint_ids: bool = True) -> None:
        self.origin = url.rstrip("/")
        self.token = token
        self.retries = retries
        self.timeout_s = timeout_s
        self.mint_ids = mint_ids

    def queue(self, name: str) -> "Queue":
        return Queue(self, name)

    def health(self) -> Any:
        return self.request("GET", "/health", idempotent=True)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        idempotent: bool,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        """Sends one call (`path` already percent-encoded) and answers its JSON (None for an empty
        body); resends it only when `idempotent` and the failure is retryable."""
        retry = 0
        while True:
            try:
                return self._attempt(method, path, body, headers or {}, timeout_s or self.timeout_s)
            except GroupqError as failure:
                asked = failure.retry_after_ms if failure.status == 503 else None
                if not idempotent or not failure.retryable or retry >= self.retries or (asked or 0) > MAX_RETRY_AFTER_MS:
                    raise
                # Full jitter: clients that failed together do not come back together.
                capped = min(RETRY_MAX_MS, RETRY_BASE_MS * 2**retry)
                time.sleep((asked if asked is not None else random.random() * capped) / 1000)
                retry += 1

    def _attempt(self, method: str, path: str, body: Any, extra: Mapping[str, str], timeout_s: float) -> Any:
        url = f"{self.origin}{path}"
        headers = {**extra, "authorization": f"Bearer {self.token}", "accept": "application/json"}
        data = None
        if body is not None:
            headers["content-type"] = "application/json"
            data = json.dumps(body, separators=(",", ":")).encode("utf-8")
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as res:
                status, text, answer_headers = res.status, res.read().decode("utf-8"), res.headers
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", errors="replace")
            raise error_from_answer(error.code, text, _lower(error.headers)) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            # No answer at all: name the call and the cause, which a bare "timed out" does not.
            reason = getattr(error, "reason", None) or error
            raise GroupqError("NETWORK_ERROR", 0, f"{method} {url} got no answer: {reason}") from error
        if text == "":
            return None
        try:
            return json.loads(text)
        except ValueError:
            start = text.strip()[:200]
            message = f"{method} {url}: HTTP {status} with a body that is not JSON: {start}"
            raise GroupqError("BAD_RESPONSE", status, message, request_id=answer_headers.get("x-request-id")) from None


def _lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in (headers.items() if headers else [])}


def _segment(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _trace_headers(traceparent: str | None, tracestate: str | None) -> dict[str, str]:
    headers = {}
    if traceparent is not None:
        headers["traceparent"] = traceparent
    if tracestate is not None:
        headers["tracestate"] = tracestate
    return headers


class Queue:
    """One queue's calls. Jobs are dicts with the API's field names (`group`, `data`, `id`,
    `delayMs`, `orderMs`, `priority`, ...: docs/http-api.md#jobs)."""

    def __init__(self, client: Client, name: str) -> None:
        self.client = client
        self.name = name
        self.base = f"/v1/queues/{_segment(name)}"

    def _named(self, job: Mapping[str, Any]) -> dict[str, Any]:
        """The job with an id: its own, or one made here when mint_ids is on."""
        if "id" in job or not self.client.mint_ids:
            return dict(job)
        return {**job, "id": random_id()}

    def configure(self, config: Mapping[str, Any]) -> Any:
        """Creates the queue, or replaces its whole config (omitted fields take their defaults)."""
        return self.client.request("PUT", self.base, dict(config), idempotent=True)

    def get(self) -> Any:
        """The queue: its config and counts."""
        return self.client.request("GET", self.base, idempotent=True)

    def add(self, job: Mapping[str, Any], *, traceparent: str | None = None, tracestate: str | None = None) -> Any:
        """Enqueues one job: `{id, state}`, with `duplicate: True` for a known id. Resent after no
        answer or a 503 only when it has an id (its own, or one made here)."""
        body = self._named(job)
        headers = _trace_headers(traceparent, tracestate)
        return self.client.request("POST", f"{self.base}/jobs", body, idempotent="id" in body, headers=headers)

    def add_batch(self, jobs: Iterable[Mapping[str, Any]], *, traceparent: str | None = None, tracestate: str | None = None) -> list[Any]:
        """Enqueues up to 1000 jobs, validated whole before any is written; resent as `add` is."""
        named = [self._named(job) for job in jobs]
        headers = _trace_headers(traceparent, tracestate)
        idempotent = all("id" in job for job in named)
        reply = self.client.request("POST", f"{self.base}/jobs/batch", {"jobs": named}, idempotent=idempotent, headers=headers)
        return reply["jobs"]

    def get_job(self, id: str) -> Any:
        return self.client.request("GET", f"{self.base}/jobs/{_segment(id)}", idempotent=True)

    def wait_for_job(self, id: str, timeout_ms: int = 60_000) -> Any:
        """The job once it has finished (completed, failed, cancelled, expired), or as it is when
        `timeout_ms` has passed: `GET ?waitMs=`, repeated. On a queue that keeps no completed jobs
        (`keepCompleted: 0`, the default) add the job with `keepResult: True`, else it is gone when
        it completes (JOB_NOT_FOUND)."""
        deadline = time.monotonic() + timeout_ms / 1000
        path = f"{self.base}/jobs/{_segment(id)}"
        while True:
            wait_ms = min(MAX_WAIT_MS, max(0, round((deadline - time.monotonic()) * 1000)))
            # Each attempt may hold its answer wait_ms: the bound on it must be longer.
            job = self.client.request("GET", f"{path}?waitMs={wait_ms}", idempotent=True, timeout_s=self.client.timeout_s + wait_ms / 1000)
            if job.get("state") in FINISHED_STATES or time.monotonic() >= deadline:
                return job

    def add_and_wait(self, job: Mapping[str, Any], timeout_ms: int = 60_000) -> Any:
        """Enqueues one job with `keepResult` (its end is kept for the wait on any queue), then waits for it."""
        answer = self.add({**job, "keepResult": True})
        return self.wait_for_job(answer["id"], timeout_ms)

    def cancel_job(self, id: str) -> Any:
        """Ends a waiting, delayed or active job as cancelled (an active job's lease is revoked).
        Never resent: a cancel that may have happened is for the caller to decide on."""
        return self.client.request("POST", f"{self.base}/jobs/{_segment(id)}/cancel", idempotent=False)

    def cancel(self, id: str) -> Any:
        """The same as cancel_job."""
        return self.cancel_job(id)
