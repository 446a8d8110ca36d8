"""An endpoint's side in Python: verify a delivery (verify.py), hold its lease through the four
callbacks the body names (heartbeat, progress, complete, fail), and run a job function behind a
WSGI or an ASGI app, answering as groupq reads answers (docs/delivery.md): 200 with the result as
JSON, 500 with the error's text on a failure, plus `groupq-retry: false` for NonRetryableError or
`Retry-After` for RetryAfterError. With `background=True` the answer is 202 at once and the run
ends through the callbacks, its lease heartbeated meanwhile, for jobs longer than the queue's
`timeoutMs`. Refusals as src/receiver: 401, 409 a replay, 413 a body too large."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable

from .errors import CallbackError, DeliveryVerificationError, JobCancelledError, LeaseLostError, NonRetryableError, RetryAfterError
from .verify import DEFAULT_MAX_BODY_BYTES, Verifier

# Waits between tries of a callback: a heartbeat must land well inside its lease, so they stay short.
RETRY_DELAYS_S = (0.25, 1.0)
TRANSIENT = frozenset({502, 503, 504})
# groupq caps a retryAfterMs, and a heartbeat's extendMs, at one day; and a job's error text.
DAY_MS = 86_400_000
MAX_ERROR_CHARS = 2048
# A heartbeat never waits less than this, so a lease near its end is not hammered.
MIN_HEARTBEAT_DELAY_S = 0.1


def _post(url: str, body: dict[str, Any], timeout_s: float = 30.0) -> Any:
    """POSTs one callback; retries no answer or a 502/503/504 twice. 409: the lease is gone."""
    data = json.dumps(body, separators=(",", ":")).encode("utf-8")
    for attempt in range(len(RETRY_DELAYS_S) + 1):
        req = urllib.request.Request(url, data=data, method="POST", headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as res:
                text = res.read().decode("utf-8")
                return json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode("utf-8", errors="replace")
            if status in TRANSIENT and attempt < len(RETRY_DELAYS_S):
                time.sleep(RETRY_DELAYS_S[attempt])
                continue
            code, message = _error_of(text)
            # A retried complete or fail whose first try did land also gets 409: the lease is over either way.
            if status == 409 and code == "JOB_CANCELLED":
                raise JobCancelledError(message or "the job was cancelled") from None
            if status == 409:
                raise LeaseLostError(message or "the lease is no longer held") from None
            raise CallbackError(f"{url}: HTTP {status}{': ' + message if message else ''}", status, code) from None
        except (urllib.error.URLError, OSError):
            if attempt < len(RETRY_DELAYS_S):
                time.sleep(RETRY_DELAYS_S[attempt])
                continue
            raise


def _error_of(text: str) -> tuple[str | None, str | None]:
    try:
        error = json.loads(text)["error"]
        return error.get("code"), error.get("message")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, None


class Lease:
    """One delivery's lease, held through its callbacks, each carrying the lease token. After
    `complete` or `fail` nothing more is sent; a 409 raises LeaseLostError (JobCancelledError when
    the job was cancelled) and marks the lease `lost`."""

    def __init__(self, delivery: dict[str, Any]) -> None:
        self.delivery = delivery
        self.token = delivery["lease"]["token"]
        self.expires_at_ms = delivery["lease"]["expiresAt"]
        self.callbacks = delivery["callbacks"]
        self.lost = False
        self.ended = False
        self._lock = threading.Lock()

    def _send(self, name: str, body: dict[str, Any]) -> Any:
        try:
            return _post(self.callbacks[name], {"lease": self.token, **body})
        except LeaseLostError:
            self.lost = True
            raise

    def heartbeat(self, extend_ms: int | None = None) -> int:
        """Extends the lease to now + `extend_ms` (default: the job's timeoutMs); answers the new end, epoch ms."""
        body = {} if extend_ms is None else {"extendMs": min(int(extend_ms), DAY_MS)}
        answer = self._send("heartbeat", body)
        self.expires_at_ms = answer["expiresAt"]
        return self.expires_at_ms

    def progress(self, value: Any) -> None:
        """Reports progress, shown on the job: a number 0-100 or a small JSON object (up to 4 KiB)."""
        self._send("progress", {"progress": value})

    def complete(self, result: Any = None) -> str:
        """Completes the job with `result` (None is stored as null); answers its state."""
        with self._lock:
            self.ended = True
        return self._send("complete", {"result": result})["state"]

    def fail(self, error: str, *, retry: bool = True, retry_after_ms: int | None = None) -> str:
        """Fails this attempt: retried with the backoff, or after `retry_after_ms`, or never
        (`retry=False`). Answers the job's state: `waiting` (it will be retried) or `failed`."""
        with self._lock:
            self.ended = True
        body: dict[str, Any] = {"error": (error or "failed")[:MAX_ERROR_CHARS]}
        if not retry:
            body["retry"] = False
        if retry_after_ms is not None:
            body["retryAfterMs"] = min(math.ceil(retry_after_ms), DAY_MS)
        return self._send("fail", body)["state"]

    def keep_alive(self) -> Callable[[], None]:
        """Heartbeats in a daemon thread at a third of the lease that remains, until the lease ends
        or is lost; answers the function that stops it."""
        stop = threading.Event()

        def beat() -> None:
            while not (self.ended or self.lost):
                remaining_s = self.expires_at_ms / 1000 - time.time()
                if stop.wait(max(MIN_HEARTBEAT_DELAY_S, remaining_s / 3)) or self.ended:
                    return
                try:
                    self.heartbeat()
                except LeaseLostError:
                    return
                except Exception:  # a heartbeat that kept failing: the next one may land
                    continue

        threading.Thread(target=beat, name=f"groupq-heartbeat-{self.delivery['id']}", daemon=True).start()
        return stop.set


class JobContext:
    """What a job function gets besides the job: its attempt, and the lease's progress and heartbeat."""

    def __init__(self, lease: Lease, request_id: str | None) -> None:
        delivery = lease.delivery
        self.lease = lease
        self.attempt: int = delivery["attempt"]
        self.max_attempts: int = delivery["maxAttempts"]
        self.is_last_attempt = self.attempt >= self.max_attempts
        # The groupq request or cron run that pushed this delivery: its id in groupq's log.
        self.request_id = request_id

    def progress(self, value: Any) -> None:
        self.lease.progress(value)

    def heartbeat(self, extend_ms: int | None = None) -> int:
        return self.lease.heartbeat(extend_ms)


def error_text(error: BaseException) -> str:
    return str(error) or type(error).__name__


def answer_of(ok: bool, value: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    """The synchronous answer to a run: (status, headers, body)."""
    if ok:
        if value is None:
            return 200, [], b""
        try:
            body = json.dumps(value, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError) as error:
            # Not JSON: the same result would fail every attempt.
            return 500, [("content-type", "text/plain; charset=utf-8"), ("groupq-retry", "false")], f"the result is not JSON: {error}".encode()
        return 200, [("content-type", "application/json")], body
    headers = [("content-type", "text/plain; charset=utf-8")]
    if isinstance(value, NonRetryableError):
        headers.append(("groupq-retry", "false"))
    if isinstance(value, RetryAfterError):
        headers.append(("retry-after", str(math.ceil(value.retry_after_ms / 1000))))
    return 500, headers, error_text(value).encode("utf-8")


def finish(lease: Lease, ok: bool, value: Any) -> None:
    """Reports a run's end through the callbacks (after a 202)."""
    if ok:
        lease.complete(value)
    elif isinstance(value, NonRetryableError):
        lease.fail(error_text(value), retry=False)
    elif isinstance(value, RetryAfterError):
        lease.fail(error_text(value), retry_after_ms=value.retry_after_ms)
    else:
        lease.fail(error_text(value))


def refusal_status(error: DeliveryVerificationError) -> int:
    """401 a refused request (an ordinary failed attempt), 409 a replay, 413 a body too large."""
    if error.reason == "replayed":
        return 409
    return 413 if error.reason == "body_too_large" else 401


class _Endpoint:
    """What the WSGI and ASGI handlers share: the verifier, the options, and the run's end."""

    def __init__(self, fn: Callable[..., Any], secret: str, next_secret: str | None, background: bool, on_error: Callable[[BaseException], None] | None, verify_options: dict[str, Any]) -> None:
        self.fn = fn
        self.verify = Verifier(secret, next_secret, kind="delivery", **verify_options)
        self.max_body_bytes = verify_options.get("max_body_bytes", DEFAULT_MAX_BODY_BYTES)
        self.background = background
        self.on_error = on_error or (lambda error: None)

    def check(self, headers: dict[str, str], body: bytes | None) -> tuple[int, list[tuple[str, str]], bytes] | dict[str, Any]:
        """The verified delivery, or the answer refusing it. `body` None: declared too large, not read."""
        try:
            if body is None:
                raise DeliveryVerificationError("body_too_large", f"the delivery body is over {self.max_body_bytes} bytes")
            return self.verify(headers, body)
        except DeliveryVerificationError as error:
            return refusal_status(error), [("content-type", "text/plain; charset=utf-8")], str(error).encode("utf-8")

    def run_in_background(self, lease: Lease, run: Callable[[], tuple[bool, Any]]) -> None:
        """Runs the job in a thread with heartbeats, then reports its end through the callbacks."""
        stop = lease.keep_alive()

        def work() -> None:
            try:
                ok, value = run()
                # A lease already lost (a 409 the function heard) takes no complete or fail.
                if not lease.lost:
                    finish(lease, ok, value)
            except BaseException as error:  # a complete that could not land: the lease expires, groupq retries
                self.on_error(error)
            finally:
                stop()

        threading.Thread(target=work, name=f"groupq-job-{lease.delivery['id']}", daemon=True).start()


def _capture(fn: Callable[[], Any]) -> tuple[bool, Any]:
    try:
        return True, fn()
    except Exception as error:
        return False, error


def wsgi_handler(fn: Callable[[dict[str, Any], JobContext], Any], secret: str, next_secret: str | None = None, *, background: bool = False, on_error: Callable[[BaseException], None] | None = None, **verify_options: Any) -> Callable:
    """A WSGI app that takes groupq's deliveries and runs `fn(job, ctx)` for each genuine one:
    its return value completes the job as its `result`, an exception fails the attempt.
    `verify_options`: Verifier's (tolerance_s, max_body_bytes, seen)."""
    endpoint = _Endpoint(fn, secret, next_secret, background, on_error, verify_options)

    def app(environ: dict[str, Any], start_response: Callable) -> list[bytes]:
        def answer(status: int, headers: list[tuple[str, str]], body: bytes) -> list[bytes]:
            start_response(f"{status} {_REASONS.get(status, '')}".strip(), headers)
            return [body]

        if environ.get("REQUEST_METHOD") != "POST":
            return answer(405, [("allow", "POST")], b"")
        headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items() if key.startswith("HTTP_")}
        try:
            length = max(0, int(environ.get("CONTENT_LENGTH") or 0))
        except ValueError:
            length = 0
        # A body declared longer than the cap is not read at all.
        body = environ["wsgi.input"].read(length) if length <= endpoint.max_body_bytes else None
        checked = endpoint.check(headers, body)
        if isinstance(checked, tuple):
            return answer(*checked)
        lease = Lease(checked)
        ctx = JobContext(lease, headers.get("groupq-request-id"))
        if endpoint.background:
            endpoint.run_in_background(lease, lambda: _capture(lambda: fn(checked, ctx)))
            return answer(202, [], b"")
        return answer(*answer_of(*_capture(lambda: fn(checked, ctx))))

    return app


def asgi_handler(fn: Callable[[dict[str, Any], JobContext], Any], secret: str, next_secret: str | None = None, *, background: bool = False, on_error: Callable[[BaseException], None] | None = None, **verify_options: Any) -> Callable:
    """An ASGI app doing what wsgi_handler does. `fn` may be `async def` (awaited; its ctx calls
    block, so wrap them: `await asyncio.to_thread(ctx.progress, 50)`) or plain (run in a thread)."""
    endpoint = _Endpoint(fn, secret, next_secret, background, on_error, verify_options)

    async def run(job: dict[str, Any], ctx: JobContext) -> tuple[bool, Any]:
        try:
            if inspect.iscoroutinefunction(fn):
                return True, await fn(job, ctx)
            return True, await asyncio.to_thread(fn, job, ctx)
        except Exception as error:
            return False, error

    async def app(scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return

        async def answer(status: int, headers: list[tuple[str, str]], body: bytes) -> None:
            raw = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
            await send({"type": "http.response.start", "status": status, "headers": raw})
            await send({"type": "http.response.body", "body": body})

        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            return await answer(405, [("allow", "POST")], b"")
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        body: bytes | None = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            # Stop reading past the cap: what a stranger sends costs at most max_body_bytes.
            if len(body) > endpoint.max_body_bytes:
                body = None
                break
            if not message.get("more_body"):
                break
        checked = endpoint.check(headers, body)
        if isinstance(checked, tuple):
            return await answer(*checked)
        lease = Lease(checked)
        ctx = JobContext(lease, headers.get("groupq-request-id"))
        if endpoint.background:
            endpoint.run_in_background(lease, lambda: asyncio.run(run(checked, ctx)))
            return await answer(202, [], b"")
        await answer(*answer_of(*(await run(checked, ctx))))

    return app


_REASONS = {200: "OK", 202: "Accepted", 401: "Unauthorized", 405: "Method Not Allowed", 409: "Conflict", 413: "Payload Too Large", 500: "Internal Server Error"}
