"""A throw-away S3 server on loopback (moto's, in a process of its own), started and stopped by
the tests, with its request log (issue 46).

The server records every request it serves (moto's recorder: method, URL, headers) into a
JSON Lines file; `S3Server.requests` reads it back as `S3Request`s and `S3Request.kind`
names the S3 operation, so a test can count CopyObject and LIST requests of a code path.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

ACCESS_KEY, SECRET_KEY, REGION = "testing", "testing", "us-east-1"


@dataclass(frozen=True)
class S3Request:
    """One request the server served."""

    method: str
    path: str
    query: str
    headers: Mapping[str, str]

    @property
    def kind(self) -> str:
        """The S3 operation: ``CopyObject``, ``ListObjects``, ``PutObject``, ``UploadPart``,
        ``CreateMultipartUpload``, ``CompleteMultipartUpload``, ``GetObject``, ``HeadObject``,
        ``DeleteObject``, ``DeleteObjects``, ``CreateBucket``, ``HeadBucket`` or the method."""
        query = parse_qs(self.query, keep_blank_values=True)
        headers = {k.lower(): v for k, v in self.headers.items()}
        bucket_level = self.path.strip("/").count("/") == 0
        if self.method == "PUT":
            if "x-amz-copy-source" in headers:
                return "CopyObject"
            if "partNumber" in query:
                return "UploadPart"
            return "CreateBucket" if bucket_level else "PutObject"
        if self.method == "POST":
            if "uploads" in query:
                return "CreateMultipartUpload"
            if "uploadId" in query:
                return "CompleteMultipartUpload"
            if "delete" in query:
                return "DeleteObjects"
        if self.method == "GET":
            return "ListObjects" if bucket_level else "GetObject"
        if self.method == "HEAD":
            return "HeadBucket" if bucket_level else "HeadObject"
        if self.method == "DELETE":
            return "DeleteBucket" if bucket_level else "DeleteObject"
        return self.method


def logged_requests(log_path: Path) -> list[S3Request]:
    """The requests a server logged into ``log_path``, in order (moto records a request after
    answering it: the log is read once it has not grown for 0.3 s)."""
    lines, deadline = log_path.read_text().splitlines(), time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.3)
        again = log_path.read_text().splitlines()
        if again == lines:
            break
        lines = again
    found = []
    for entry in _entries(lines):
        url = urlsplit(entry["url"])
        found.append(S3Request(entry["method"], url.path, url.query, entry["headers"]))
    return found


def _entries(lines: list[str]) -> Iterator[dict[str, Any]]:
    """The log's records: one per line, except where two requests answered at once were
    written on one line (moto's recorder does not lock its file)."""
    decoder = json.JSONDecoder()
    for line in lines:
        at = 0
        while at < len(line):
            entry, at = decoder.raw_decode(line, at)
            yield entry
            while at < len(line) and line[at].isspace():
                at += 1


def request_counts(requests: list[S3Request]) -> Counter[str]:
    """How many requests of each `S3Request.kind`, and ``objects``: the objects written
    (PutObject and CompleteMultipartUpload: a file smaller than a part goes in one PUT,
    a bigger one in a multipart upload)."""
    counts = Counter(r.kind for r in requests)
    counts["objects"] = counts["PutObject"] + counts["CompleteMultipartUpload"]
    return counts


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class S3Server:
    """A moto S3 server on 127.0.0.1 (`start`), its endpoint and its request log."""

    endpoint: str
    log_path: Path
    process: subprocess.Popen[bytes]

    @classmethod
    def start(cls, work: Path, *, record: bool = True) -> S3Server:
        """Start a server whose request log lives in ``work`` (unless not ``record``: a long
        run of tests need not pay for it); returns once it answers."""
        work.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        log_path = work / "s3-requests.jsonl"
        env = dict(os.environ)
        if record:
            env.update(MOTO_ENABLE_RECORDING="1", MOTO_RECORDER_FILEPATH=str(log_path))
        argv = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
        with open(work / "s3-server.log", "wb") as out:
            process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        server = cls(f"http://127.0.0.1:{port}", log_path, process)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{server.endpoint}/moto-api/", timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    server.stop()
                    log = work / "s3-server.log"
                    raise RuntimeError(f"the S3 server did not start: {log}") from None
                time.sleep(0.1)
        server.reset_log()
        return server

    def env(self) -> dict[str, str]:
        """The AWS settings a client of this server takes."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
        }

    def create_bucket(self, name: str) -> None:
        """Create a bucket (anonymous requests are fine for moto)."""
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        urllib.request.urlopen(request, timeout=10).close()

    def reset_log(self) -> None:
        """Forget the requests served so far."""
        self.log_path.write_text("")

    def requests(self) -> list[S3Request]:
        """The requests served since the last `reset_log`, in order."""
        return logged_requests(self.log_path)

    def counts(self) -> Counter[str]:
        """How many requests of each `S3Request.kind` were served since `reset_log`, and
        ``objects``: the objects written (`request_counts`)."""
        return request_counts(self.requests())

    def stop(self) -> None:
        """Stop the server."""
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextlib.contextmanager
def serving_bucket(work: Path, bucket: str = "lake", *, record: bool = True) -> Iterator[S3Server]:
    """A started server with ``bucket``, its AWS settings in the environment meanwhile (what a
    test module's ``s3`` fixture yields); stopped at the end."""
    server = S3Server.start(work, record=record)
    try:
        server.create_bucket(bucket)
        with pytest.MonkeyPatch.context() as env:
            for key, value in server.env().items():
                env.setenv(key, value)
            yield server
    finally:
        server.stop()
