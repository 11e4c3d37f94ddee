"""Serving the page: a listening socket on loopback and uvicorn over it.

The socket is bound before uvicorn starts, so that a port in use is reported as one line
(and ``--port 0`` takes a free port, whose URL is then known)."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from versioned.errors import InputError

if TYPE_CHECKING:
    import uvicorn
    from starlette.applications import Starlette

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host``:``port``.

    Raises:
        InputError: The address cannot be bound (a port in use, an unknown host).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port",
            host=host,
            port=port,
        ) from exc
    sock.listen(128)
    sock.setblocking(False)
    return sock


def url_of(sock: socket.socket) -> str:
    """The page's address on ``sock``."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def server(app: Starlette) -> uvicorn.Server:
    """A uvicorn server of ``app`` that logs only warnings (no access log: the page is
    local, and its requests are the user's own)."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    return uvicorn.Server(config)
