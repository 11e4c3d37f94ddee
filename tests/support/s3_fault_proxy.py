"""An HTTP proxy between S3 clients (pyarrow on the driver and in Spark's Python workers,
Hadoop's S3A in the JVM) and the tests' S3 server, that injects an object store's faults
(issue 46): a burst of ``503 SlowDown`` answers, a connection cut in the middle of an
upload (a multipart upload's part, or a single PUT), a lost reply to a write the server did
store, a slow GET.

Each fault is armed (`slow_down`, `cut_upload`, `lose_write_reply`, `slow_gets`) and spent
on the next requests of its kind; `served` counts the faults that did hit a request, by
kind. Requests are read whole (``Content-Length`` or chunked bodies, ``Expect:
100-continue`` answered here) and sent to the server on a connection of the proxy's own;
answers go back with a ``Content-Length``. Clients keep their connections alive as with
the server.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from collections import Counter
from typing import BinaryIO
from urllib.parse import urlsplit

from tests.support.s3_server import S3Request

SLOW_DOWN = "SlowDown"
CUT_UPLOAD = "cut upload"
LOST_REPLY = "lost reply"
SLOW_GET = "slow GET"
FAULTS = (SLOW_DOWN, CUT_UPLOAD, LOST_REPLY, SLOW_GET)

_WRITES = frozenset({"PutObject", "CompleteMultipartUpload"})
_UPLOADS = frozenset({"PutObject", "UploadPart"})
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "expect", "proxy-connection"})
_SLOW_DOWN_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message>"
    b"<RequestId>versioned-fault-proxy</RequestId></Error>"
)


class S3FaultProxy:
    """Listens on 127.0.0.1 (`endpoint`) and forwards every request to ``upstream``
    (``http://host:port``), spending the armed faults on the way."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self._upstream = (parts.hostname or "127.0.0.1", int(parts.port or 80))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._armed: Counter[str] = Counter()
        self._get_delay_s = 0.0
        self.served: Counter[str] = Counter()
        """Faults that hit a request so far, by kind (`FAULTS`)."""
        self.requests: Counter[str] = Counter()
        """Requests seen so far, by `S3Request.kind`."""
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    # arming -----------------------------------------------------------------------------------

    def slow_down(self, requests: int) -> None:
        """Answer the next ``requests`` requests (of any kind) ``503 SlowDown`` unseen by
        the server, as S3 does when a prefix takes more than its request rate."""
        self._arm(SLOW_DOWN, requests)

    def cut_upload(self) -> None:
        """Cut the connection of the next upload halfway through its body: a part of a
        multipart upload, or a file sent in one PutObject (pyarrow sends a file smaller than
        a part so, S3A one below its multipart threshold); the server never sees it."""
        self._arm(CUT_UPLOAD, 1)

    def lose_write_reply(self) -> None:
        """Send the next PutObject or CompleteMultipartUpload to the server, then close the
        client's connection without its answer: the object is stored, the client does not
        know."""
        self._arm(LOST_REPLY, 1)

    def slow_gets(self, requests: int, delay_s: float) -> None:
        """Answer the next ``requests`` GetObject requests ``delay_s`` late."""
        self._get_delay_s = delay_s
        self._arm(SLOW_GET, requests)

    def disarm(self) -> None:
        """Forget the faults armed and not spent yet."""
        with self._lock:
            self._armed.clear()

    def close(self) -> None:
        """Stop listening (connections open now end with their clients)."""
        self._closed = True
        self._listener.close()

    def _arm(self, fault: str, times: int) -> None:
        with self._lock:
            self._armed[fault] += times

    def _spend(self, fault: str) -> bool:
        with self._lock:
            if self._armed[fault] <= 0:
                return False
            self._armed[fault] -= 1
            self.served[fault] += 1
            return True

    # serving ----------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = http.client.HTTPConnection(*self._upstream, timeout=120)
        reader = client.makefile("rb")
        try:
            while self._one_request(client, reader, upstream):
                pass
        except (OSError, http.client.HTTPException, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                reader.close()
            _close(client)
            upstream.close()

    def _one_request(
        self, client: socket.socket, reader: BinaryIO, upstream: http.client.HTTPConnection
    ) -> bool:
        """Serve one request; whether the connection stays open."""
        line = reader.readline()
        if not line.strip():
            return False
        method, target, _ = line.decode("latin-1").split(" ", 2)
        headers = _headers(reader)
        lower = {k.lower(): v for k, v in headers}
        parts = urlsplit(target)
        kind = S3Request(method, parts.path, parts.query, lower).kind
        with self._lock:
            self.requests[kind] += 1
        if lower.get("expect", "").lower() == "100-continue":
            client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        length = int(lower.get("content-length", "0") or 0)
        chunked = "chunked" in lower.get("transfer-encoding", "").lower()
        size = length or int(lower.get("x-amz-decoded-content-length", "0") or 0)
        if kind in _UPLOADS and size > 1 and self._spend(CUT_UPLOAD):
            reader.read(size // 2)
            return False  # the connection is cut halfway through the body
        body = _chunked_body(reader) if chunked else reader.read(length)
        if self._spend(SLOW_DOWN):
            # an answer to HEAD has no body: bytes after it would open the next answer
            body = b"" if method == "HEAD" else _SLOW_DOWN_BODY
            _answer(client, 503, "Slow Down", [("Content-Type", "application/xml")], body)
            return True
        dropped = _HOP_BY_HOP | ({"transfer-encoding", "content-length"} if chunked else set())
        forwarded = [(k, v) for k, v in headers if k.lower() not in dropped]
        if chunked:
            forwarded.append(("Content-Length", str(len(body))))
        upstream.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        for key, value in forwarded:
            upstream.putheader(key, value)
        upstream.endheaders(body if body else None)
        response = upstream.getresponse()
        data = response.read()
        if kind in _WRITES and response.status < 300 and self._spend(LOST_REPLY):
            return False  # stored; the answer is lost with the connection
        if kind == "GetObject" and self._spend(SLOW_GET):
            time.sleep(self._get_delay_s)
        back = [
            (k, v)
            for k, v in response.getheaders()
            if k.lower() not in _HOP_BY_HOP | {"transfer-encoding", "content-length"}
        ]
        if method == "HEAD":  # no body: the object's length is the server's
            back.append(("Content-Length", response.getheader("Content-Length", "0")))
            _answer(client, response.status, response.reason, back, b"", sized=False)
        else:
            _answer(client, response.status, response.reason, back, data)
        return True


def _headers(reader: BinaryIO) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    while True:
        line = reader.readline()
        if line in (b"\r\n", b"\n", b""):
            return found
        key, _, value = line.decode("latin-1").partition(":")
        found.append((key.strip(), value.strip()))


def _chunked_body(reader: BinaryIO) -> bytes:
    """A chunked body, decoded (it is forwarded with its length)."""
    body = bytearray()
    while True:
        size = int(reader.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while reader.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return bytes(body)
        body += reader.read(size)
        reader.readline()


def _answer(
    client: socket.socket,
    status: int,
    reason: str,
    headers: list[tuple[str, str]],
    body: bytes,
    *,
    sized: bool = True,
) -> None:
    head = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers)]
    if sized:
        head.append(f"Content-Length: {len(body)}")
    client.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
