"""The errors of the groupq kit: the client's one error (the API's error shape, or no answer),
the two a job function raises to steer groupq's retries, the one a refused delivery raises, and
the ones a lease callback raises when the lease is gone. Mirrors src/client/errors.ts and
src/receiver/errors.ts, so a Python endpoint and a TypeScript one fail alike."""

from __future__ import annotations

import math
from typing import Any

# Codes for answers without groupq's error body (a proxy's page, an empty 503), as the TS client reads them.
CODE_OF_STATUS = {
    400: "VALIDATION_FAILED",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "INVALID_STATE",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
    503: "REDIS_UNAVAILABLE",
}


class GroupqError(Exception):
    """A call that failed: `code` is the API's (docs/http-api.md#errors), or NETWORK_ERROR when no
    answer came (status 0), BAD_RESPONSE for a 2xx answer that was not JSON, or one read from the
    status (FORBIDDEN, HTTP_<status>) for an answer without groupq's error body."""

    def __init__(
        self,
        code: str,
        status: int,
        message: str,
        details: Any = None,
        retry_after_ms: int | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        self.details = details
        self.retry_after_ms = retry_after_ms
        # The failed request's id (x-request-id, else the body's): finds its lines in groupq's log.
        self.request_id = request_id

    @property
    def retryable(self) -> bool:
        """Trying the same call again later may succeed: no answer came, or the answer was a 503."""
        return self.code == "NETWORK_ERROR" or self.status == 503

    def __repr__(self) -> str:
        return f"GroupqError({self.code!r}, {self.status}, {self.message!r})"


class NonRetryableError(Exception):
    """Raised by a job function: fail the job now, without further attempts."""


class RetryAfterError(Exception):
    """Raised by a job function: this attempt failed, try again after `retry_after_ms` (not the backoff)."""

    def __init__(self, retry_after_ms: float, message: str | None = None) -> None:
        if not (isinstance(retry_after_ms, (int, float)) and math.isfinite(retry_after_ms) and retry_after_ms >= 0):
            raise ValueError(f"retry_after_ms must be a finite number >= 0, got {retry_after_ms!r}")
        self.retry_after_ms = math.ceil(retry_after_ms)
        super().__init__(message or f"retry after {self.retry_after_ms} ms")


class DeliveryVerificationError(Exception):
    """A request that is not a genuine, fresh groupq message; `reason` says which check refused it:
    missing_headers, bad_timestamp, timestamp_out_of_tolerance, body_too_large, bad_signature,
    wrong_kind, bad_body or replayed."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class LeaseLostError(Exception):
    """The lease is no longer this receiver's (it lapsed, the job ended elsewhere, its queue was
    deleted): groupq answered 409 and recorded nothing."""


class JobCancelledError(LeaseLostError):
    """The lease is gone because the job was cancelled (409 JOB_CANCELLED): stop the work."""


class CallbackError(Exception):
    """groupq refused a lease callback for a reason other than a lost lease (a result too large, say)."""

    def __init__(self, message: str, status: int, code: str | None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
