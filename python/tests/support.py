"""What the kit's tests share: the stack they run against (from the environment that
test/python/kit.test.ts sets: GROUPQ_URL, GROUPQ_ADMIN_TOKEN, GROUPQ_SIGNING_SECRET), endpoints
served on loopback (a WSGI app with wsgiref, an ASGI app through a small bridge, since the
standard library has no ASGI server), a capture of what an endpoint received, a proxy that
swallows answers, and a bounded wait. Real servers and sockets only."""

from __future__ import annotations

import asyncio
import http.server
import io
import os
import socketserver
import threading
import time
import unittest
import urllib.error
import urllib.request
import uuid
from typing import Any, Callable
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

URL = os.environ.get("GROUPQ_URL", "")
ADMIN_TOKEN = os.environ.get("GROUPQ_ADMIN_TOKEN", "")
SIGNING_SECRET = os.environ.get("GROUPQ_SIGNING_SECRET", "")

# Retries come back at once (no jitter), so a test waits for behaviour, not for a backoff.
QUICK_RETRIES = {"type": "fixed", "delayMs": 0, "jitter": False}


def needs_stack(case: type) -> type:
    """Skips a live test case when no stack was given (run from test/python/kit.test.ts)."""
    return unittest.skipUnless(URL and ADMIN_TOKEN and SIGNING_SECRET, "GROUPQ_URL, GROUPQ_ADMIN_TOKEN and GROUPQ_SIGNING_SECRET name the stack")(case)


def queue_name(prefix: str) -> str:
    return f"py-{prefix}-{uuid.uuid4().hex[:8]}"


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:  # the test output is the tests' own
        pass


class Served:
    """A server on 127.0.0.1 in a daemon thread; `url` is its origin. close() stops it."""

    def __init__(self, server: socketserver.BaseServer) -> None:
        self.server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self.thread = threading.Thread(target=server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve_wsgi(app: Callable) -> Served:
    return Served(make_server("127.0.0.1", 0, app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler))


class _AsgiBridge(http.server.BaseHTTPRequestHandler):
    """Runs one request through an ASGI app (http scope), as uvicorn would, on a loop of its own."""

    app: Callable = None  # type: ignore[assignment]

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self._run()

    def do_GET(self) -> None:
        self._run()

    def _run(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": self.command,
            "path": self.path,
            "raw_path": self.path.encode(),
            "query_string": b"",
            "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in self.headers.items()],
        }
        sent: dict[str, Any] = {"status": 500, "headers": [], "body": b""}
        chunks = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            return chunks.pop(0) if chunks else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                sent["status"], sent["headers"] = message["status"], message["headers"]
            else:
                sent["body"] += message.get("body", b"")

        asyncio.run(type(self).app(scope, receive, send))
        self.send_response(sent["status"])
        for name, value in sent["headers"]:
            self.send_header(name.decode("latin-1"), value.decode("latin-1"))
        self.send_header("content-length", str(len(sent["body"])))
        self.end_headers()
        self.wfile.write(sent["body"])


def serve_asgi(app: Callable) -> Served:
    handler = type("Bridge", (_AsgiBridge,), {"app": staticmethod(app)})
    return Served(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler))


class Capture:
    """WSGI middleware keeping each request's headers and raw body before the app reads it."""

    def __init__(self, app: Callable) -> None:
        self.app = app
        self.requests: list[tuple[dict[str, str], bytes]] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Any:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items() if key.startswith("HTTP_")}
        self.requests.append((headers, body))
        environ["wsgi.input"] = io.BytesIO(body)
        return self.app(environ, start_response)


class SwallowingProxy(http.server.BaseHTTPRequestHandler):
    """Forwards each request to the stack, and for the first `swallow` of them drops the
    connection instead of passing the answer back: the call happened, its caller never heard."""

    swallow = 0
    forwarded = 0

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self._forward()

    def do_GET(self) -> None:
        self._forward()

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0)) or None
        headers = {name: value for name, value in self.headers.items() if name.lower() not in ("host", "content-length", "connection")}
        req = urllib.request.Request(f"{URL}{self.path}", data=body, method=self.command, headers=headers)
        try:
            with urllib.request.urlopen(req) as res:
                status, answer, content_type = res.status, res.read(), res.headers.get("content-type", "")
        except urllib.error.HTTPError as error:
            status, answer, content_type = error.code, error.read(), error.headers.get("content-type", "")
        cls = type(self)
        cls.forwarded += 1
        if cls.swallow > 0:
            cls.swallow -= 1
            self.close_connection = True
            self.connection.shutdown(2)  # no status line: to the caller, no answer came
            return
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def serve_swallowing_proxy(swallow: int) -> tuple[Served, type]:
    handler = type("Proxy", (SwallowingProxy,), {"swallow": swallow, "forwarded": 0})
    return Served(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)), handler


def eventually(check: Callable[[], Any], timeout_s: float = 20.0, what: str = "the expected state") -> Any:
    """Looks until `check` answers something other than None; fails after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout_s} s")
        time.sleep(0.05)
