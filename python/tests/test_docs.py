"""docs/python.md's examples run as written, against the real stack: the client example with the
stack's URL and token in place of `npm run dev`'s (and its example endpoint played by a handler
of the kit), and the WSGI endpoint example as the endpoint of a queue whose jobs name links."""

from __future__ import annotations

import contextlib
import http.server
import io
import os
import re
import unittest

from groupq import Client, wsgi_handler
from support import ADMIN_TOKEN, SIGNING_SECRET, URL, Served, needs_stack, queue_name, serve_wsgi

PAGE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


def snippet(name: str) -> str:
    """The code block after `<!-- snippet: name -->`."""
    text = open(PAGE, encoding="utf-8").read()
    match = re.search(rf"<!-- snippet: {name} -->\n```python\n(.*?)```", text, re.S)
    assert match, f"docs/python.md has no snippet {name}"
    return match.group(1)


class _Links(http.server.BaseHTTPRequestHandler):
    """Links to check: /ok answers 200 with 5 bytes, /gone 404."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        status, body = (200, b"hello") if self.path == "/ok" else (404, b"")
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@needs_stack
class DocsTest(unittest.TestCase):
    def test_the_client_example_runs_as_written(self) -> None:
        endpoint = serve_wsgi(wsgi_handler(lambda job, ctx: {"sent": job["data"]["to"]}, SIGNING_SECRET))
        # A queue of its own in place of "emails", so that a second run starts afresh.
        name = queue_name("docs-emails")
        code = (snippet("python-client")
                .replace('"http://127.0.0.1:8787"', repr(URL)).replace('"gq_dev_admin_token"', repr(ADMIN_TOKEN))
                .replace('"http://127.0.0.1:8788/jobs"', repr(f"{endpoint.url}/jobs")).replace('"emails"', repr(name)))
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, "docs/python.md", "exec"), {})
        finally:
            endpoint.close()
        self.assertEqual(out.getvalue().splitlines(), [
            "True", "completed", "completed {'sent': 'eve@example.com'}", "404 JOB_NOT_FOUND job not found",
        ])

    def test_the_endpoint_example_checks_links(self) -> None:
        module: dict = {"__name__": "endpoint_example"}
        os.environ["GROUPQ_SIGNING_SECRET"] = SIGNING_SECRET
        exec(compile(snippet("python-endpoint"), "docs/python.md", "exec"), module)
        links = Served(http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Links))
        endpoint = serve_wsgi(module["app"])
        try:
            queue = Client(URL, ADMIN_TOKEN).queue(queue_name("docs-links"))
            queue.configure({"endpoint": f"{endpoint.url}/jobs", "keepCompleted": 10})
            ok = queue.add_and_wait({"group": "links", "data": {"url": f"{links.url}/ok"}}, timeout_ms=20_000)
            gone = queue.add_and_wait({"group": "links", "data": {"url": f"{links.url}/gone"}}, timeout_ms=20_000)
        finally:
            endpoint.close()
            links.close()
        self.assertEqual((ok["state"], ok["result"]), ("completed", {"status": 200, "bytes": 5}))
        self.assertEqual((gone["state"], gone["attempts"], gone["error"]), ("failed", 1, f"HTTP 500: {links.url}/gone is gone"))


if __name__ == "__main__":
    unittest.main()
