"""Spark reads a CSV file through Hadoop's S3A connector and the AWS SDK v2 (the "s3a" jar
set), from an S3 endpoint of its own: a few lines of Python on loopback that answer the
requests a read makes (HEAD and GET of one object, with byte ranges; an empty listing for
anything else). Prints the file system's class and the rows as JSON
(tests/jars/test_runtimes.py); needs nothing but PySpark.

    python s3a_probe.py SPARK_JARS
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pyspark.sql import SparkSession

BUCKET = "lake"
KEY = "feeds/batch.csv"
BODY = b"id,v\n1,a\n2,b\n3,c\n"
EMPTY_LISTING = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
    b"<Name>lake</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys>"
    b"<IsTruncated>false</IsTruncated></ListBucketResult>"
)


class FakeS3(BaseHTTPRequestHandler):
    """One object, ``s3://lake/feeds/batch.csv``; path-style requests."""

    protocol_version = "HTTP/1.1"
    requests: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def _object(self) -> bool:
        return self.path.split("?", 1)[0] == f"/{BUCKET}/{KEY}"

    def _send(self, status: int, body: bytes, headers: dict[str, str], *, head: bool) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _serve(self, *, head: bool) -> None:
        FakeS3.requests.append(f"{self.command} {self.path}")
        meta = {"ETag": '"0123456789abcdef"', "Last-Modified": "Mon, 02 Nov 2026 10:00:00 GMT"}
        if self._object():
            body, status = BODY, 200
            wanted = self.headers.get("Range")
            if wanted:  # bytes=first-last
                first, _, last = wanted.removeprefix("bytes=").partition("-")
                end = min(int(last) if last else len(BODY) - 1, len(BODY) - 1)
                body, status = BODY[int(first) : end + 1], 206
                meta["Content-Range"] = f"bytes {first}-{end}/{len(BODY)}"
            self._send(status, body, {**meta, "Content-Type": "text/csv"}, head=head)
        elif self.command == "GET" and "list-type=2" in self.path:
            self._send(200, EMPTY_LISTING, {"Content-Type": "application/xml"}, head=head)
        else:
            self._send(404, b"", {}, head=head)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)


def main(jars: str) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeS3)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    builder = SparkSession.builder.master("local[1]").appName("versioned-s3a-probe")
    for key, value in {
        "spark.jars": jars,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": "probe",
        "spark.hadoop.fs.s3a.secret.key": "probe",
        "spark.hadoop.fs.s3a.bucket.probe": "0",
        "spark.hadoop.fs.s3a.attempts.maximum": "1",
        "spark.hadoop.fs.s3a.retry.limit": "1",
    }.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    url = f"s3a://{BUCKET}/{KEY}"
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    path = jvm.org.apache.hadoop.fs.Path(url)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    rows = spark.read.option("header", "true").csv(url).orderBy("id").collect()
    print(
        json.dumps(
            {
                "filesystem": fs.getClass().getName(),
                "rows": [[row.id, row.v] for row in rows],
                "requests": FakeS3.requests,
            }
        )
    )
    spark.stop()
    server.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
