"""groupq for Python, standard library only (3.11+): a client to enqueue and follow jobs
(client.py), and an endpoint's kit to verify deliveries, hold their lease and run a job function
behind WSGI or ASGI (verify.py, receiver.py). docs/python.md shows each."""

from .client import Client, Queue, random_id
from .errors import (
    CallbackError,
    DeliveryVerificationError,
    GroupqError,
    JobCancelledError,
    LeaseLostError,
    NonRetryableError,
    RetryAfterError,
)
from .receiver import JobContext, Lease, asgi_handler, wsgi_handler
from .verify import Verifier, sign, verify_batch, verify_delivery, verify_outcome

__all__ = [
    "CallbackError",
    "Client",
    "DeliveryVerificationError",
    "GroupqError",
    "JobCancelledError",
    "JobContext",
    "Lease",
    "LeaseLostError",
    "NonRetryableError",
    "Queue",
    "RetryAfterError",
    "Verifier",
    "asgi_handler",
    "random_id",
    "sign",
    "verify_batch",
    "verify_delivery",
    "verify_outcome",
    "wsgi_handler",
]
