"""A TCP proxy between the catalog's clients and PostgreSQL that can cut a connection right
after the server received a COMMIT, before its answer reaches the client: the client's
outcome is unknown while the server committed (a real lost acknowledgement, not a fake).

The client's bytes are forwarded as they come; when `drop_after_commit` is armed and a
chunk holds PostgreSQL's simple-query message ``COMMIT`` (``Q``, length, ``COMMIT\\0``, as
psycopg sends a commit), the chunk goes to the server and the server's next answer on that
connection is thrown away with both sockets closed.

`refuse` plays a catalog that went away (every connection closed, new ones closed as they
come) without touching the server, which other tests share; `accept` brings it back.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

_COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"


class TcpProxy:
    """Listens on 127.0.0.1 (`port`) and forwards every connection to ``upstream``."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._armed = threading.Event()
        self.cut = 0
        """Connections cut after a COMMIT so far."""
        self.on_cut: Callable[[], object] | None = None
        """Called (in the proxy's thread) right after a connection is cut."""
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._closed = False
        self._refusing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def refuse(self) -> None:
        """Close every connection, and each new one as it comes (the server seems down)."""
        self._refusing = True
        with self._lock:
            for s in list(self._sockets):
                _close(s)

    def accept(self) -> None:
        """Forward new connections again (after `refuse`)."""
        self._refusing = False

    def drop_after_commit(self) -> None:
        """Cut the next connection that sends a COMMIT, after the server has it."""
        self._armed.set()

    def close(self) -> None:
        """Stop listening and close every connection."""
        self._closed = True
        self._listener.close()
        with self._lock:
            for s in list(self._sockets):
                _close(s)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._refusing:
                _close(client)
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
            except OSError:
                _close(client)  # the server is down: the client sees its connection refused
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets |= {client, server}
            doomed = threading.Event()
            threading.Thread(
                target=self._client_to_server, args=(client, server, doomed), daemon=True
            ).start()
            threading.Thread(
                target=self._server_to_client, args=(server, client, doomed), daemon=True
            ).start()

    def _client_to_server(
        self, client: socket.socket, server: socket.socket, doomed: threading.Event
    ) -> None:
        with self._closing(client, server):
            while data := client.recv(65536):
                if self._armed.is_set() and _COMMIT in data:
                    self._armed.clear()
                    doomed.set()
                server.sendall(data)

    def _server_to_client(
        self, server: socket.socket, client: socket.socket, doomed: threading.Event
    ) -> None:
        with self._closing(client, server):
            while data := server.recv(65536):
                if doomed.is_set():  # the server's answer to COMMIT never reaches the client
                    self.cut += 1
                    _close(client)
                    if self.on_cut is not None:
                        self.on_cut()
                    return
                client.sendall(data)

    @contextlib.contextmanager
    def _closing(self, *sockets: socket.socket) -> Iterator[None]:
        try:
            yield
        except OSError:
            pass
        finally:
            for s in sockets:
                _close(s)
            with self._lock:
                self._sockets -= set(sockets)


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
