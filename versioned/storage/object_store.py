"""An S3 warehouse (``s3://bucket/prefix`` or ``s3a://``), from the standard AWS settings, for
both sides that touch it: pyarrow's S3 file system on the driver and executors (`FileIO`), and
Hadoop's S3A connector in Spark (issue 46).

The settings are the AWS SDKs' own environment variables: ``AWS_ENDPOINT_URL_S3`` or
``AWS_ENDPOINT_URL`` (an S3-compatible server, e.g. ``http://127.0.0.1:9000``; requests then go
path-style), ``AWS_REGION`` or ``AWS_DEFAULT_REGION``, and the credentials
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``) or a profile
(``AWS_PROFILE``), which both sides read through their default credential chains. No
credential is ever put into Spark's configuration (its UI shows it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from versioned.errors import StorageError

S3_SCHEMES = ("s3", "s3a")
SPARK_SCHEME = "s3a"
"""The scheme Spark reads and writes an S3 warehouse through (Hadoop's S3A connector)."""
S3A_CLASS = "org.apache.hadoop.fs.s3a.S3AFileSystem"


@dataclass(frozen=True)
class S3Location:
    """An S3 warehouse root and the settings both sides reach it with."""

    bucket: str
    prefix: str
    endpoint: str | None
    """``scheme://host:port`` of an S3-compatible server, or None for AWS itself."""
    region: str | None

    @property
    def spark_root(self) -> str:
        """The root as Spark names it (``s3a://bucket/prefix``)."""
        return f"{SPARK_SCHEME}://{self.bucket}/{self.prefix}".rstrip("/")

    @property
    def base(self) -> str:
        """The root as pyarrow's S3 file system names it (``bucket/prefix``)."""
        return f"{self.bucket}/{self.prefix}".rstrip("/")

    def filesystem(self) -> pafs.S3FileSystem:
        """pyarrow's S3 file system for the warehouse (credentials: the default chain)."""
        options: dict[str, object] = {
            # An object store has no directories: creating one is a no-op, not a check.
            "check_directory_existence_before_creation": False,
            # A file smaller than a part goes in one PutObject, not a multipart upload of three
            # requests (pyarrow opens the upload at the first part, not at the stream's open).
            "allow_delayed_open": True,
        }
        if self.region:
            options["region"] = self.region
        if self.endpoint:
            parts = urlsplit(self.endpoint)
            options["endpoint_override"] = parts.netloc
            options["scheme"] = parts.scheme or "https"
            options["force_virtual_addressing"] = False
        return pafs.S3FileSystem(**options)

    def spark_conf(self) -> dict[str, str]:
        """Hadoop settings for the warehouse's bucket (``spark.hadoop.fs.s3a.bucket.<b>.*``,
        so that other buckets keep the session's own settings)."""
        prefix = f"spark.hadoop.fs.s3a.bucket.{self.bucket}"
        conf = {"spark.hadoop.fs.s3a.impl": S3A_CLASS}
        if self.region:
            conf[f"{prefix}.endpoint.region"] = self.region
        if self.endpoint:
            parts = urlsplit(self.endpoint)
            conf[f"{prefix}.endpoint"] = self.endpoint
            conf[f"{prefix}.path.style.access"] = "true"
            conf[f"{prefix}.connection.ssl.enabled"] = str(parts.scheme == "https").lower()
        return conf


def is_s3(root: str) -> bool:
    """Whether ``root`` names an S3 warehouse."""
    return urlsplit(root).scheme.lower() in S3_SCHEMES


def s3_location(root: str, env: Mapping[str, str] | None = None) -> S3Location:
    """The S3 warehouse ``root`` (``s3://bucket/prefix`` or ``s3a://...``) with the AWS
    settings of ``env`` (default: the process's environment).

    Raises:
        StorageError: ``root`` has no bucket, or the endpoint is not a ``http(s)://`` URL.
    """
    env = os.environ if env is None else env
    parts = urlsplit(root)
    if parts.scheme.lower() not in S3_SCHEMES or not parts.netloc:
        raise StorageError(
            f"an S3 warehouse is s3://bucket/prefix (or s3a://), got {root!r}", root=root
        )
    if parts.query or parts.fragment:
        raise StorageError(
            f"an S3 warehouse takes its settings from AWS_* variables, not from the URI: {root!r}",
            root=root,
        )
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None
    if endpoint is not None:
        scheme = urlsplit(endpoint).scheme
        if scheme not in ("http", "https") or not urlsplit(endpoint).netloc:
            raise StorageError(
                f"AWS_ENDPOINT_URL must be http(s)://host[:port], got {endpoint!r}",
                endpoint=endpoint,
            )
        endpoint = endpoint.rstrip("/")
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
    return S3Location(parts.netloc, parts.path.strip("/"), endpoint, region)
