"""Which files found beside consumer offsets are read, and as what.

A broker's ``store/config/`` directory holds far more than consumer offsets, and a
broadcast client's offsets directory holds the file, its ``.bak`` and, mid-write, a
``.tmp``. A glob over either must be selective; this module names every file it
meets and says why it is read or skipped:

>>> classify_config_file("consumerOffset.json.bak")
ConfigFileKind(file_name='consumerOffset.json.bak', document_kind='consumer_offsets', file_role='bak', is_gzip=False, skip_reason=None)
>>> classify_config_file("timercheck").skip_reason
'binary timer checkpoint (4096-byte memory-mapped file), not JSON'

Pure Python: the job calls it on file names before anything reaches Spark.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger(__name__)

DocumentKind = Literal["consumer_offsets", "lmq", "delay_offsets", "client_offsets"]
FileRole = Literal["main", "bak"]

# File name -> kind of document read from it (RocketMQ's BrokerPathConfigHelper and the
# client's LocalFileOffsetStore). Each may also come as ``<name>.bak``, the previous write.
READ_FILES: dict[str, DocumentKind] = {
    "consumerOffset.json": "consumer_offsets",
    "lmqConsumerOffset.json": "lmq",
    "delayOffset.json": "delay_offsets",
    "offsets.json": "client_offsets",
}

# Files that sit beside them and are not consumer offsets (their .bak copies neither).
NOT_OFFSET_FILES: dict[str, str] = {
    "topics.json": "topic configuration (queue counts, permissions), not consumer offsets",
    "subscriptionGroup.json": "subscription group configuration, not consumer offsets",
    "consumerFilter.json": "consumer filter expressions per topic, not consumer offsets",
    "consumerOrderInfo.json": "orderly POP consumption state, not consumer offsets",
    "topicQueueMapping.json": "static topic queue mapping, not consumer offsets",
    "messageRequestMode.json": "pull or POP request mode per group, not consumer offsets",
    "broker.properties": "broker configuration properties, not consumer offsets",
    "timermetrics": "timer message metrics (compact JSON), not consumer offsets",
    "transactionMetrics": "transaction check metrics (compact JSON), not consumer offsets",
    "timercheck": "binary timer checkpoint (4096-byte memory-mapped file), not JSON",
}

TMP_REASON = (
    "temporary file written mid-persist (the writer renames it over the main file), possibly incomplete"
)
UNKNOWN_REASON = "unknown file name, not a RocketMQ offset store file"
GZIP_SUFFIX = ".gz"
BAK_SUFFIX = ".bak"
TMP_SUFFIX = ".tmp"


@dataclass(frozen=True)
class ConfigFileKind:
    """What a file is: read as ``document_kind``/``file_role``, or skipped for ``skip_reason``."""

    file_name: str
    document_kind: DocumentKind | None
    file_role: FileRole | None
    is_gzip: bool
    skip_reason: str | None

    @property
    def is_read(self) -> bool:
        return self.document_kind is not None


def _skipped(file_name: str, is_gzip: bool, reason: str) -> ConfigFileKind:
    return ConfigFileKind(file_name, None, None, is_gzip, reason)


def classify_config_file(file_name: str) -> ConfigFileKind:
    """Classify one file by its base name (case-sensitive, as RocketMQ writes them).

    ``consumerOffset.json`` -> consumer_offsets/main, ``consumerOffset.json.bak`` ->
    consumer_offsets/bak; likewise ``lmqConsumerOffset.json`` (lmq), ``delayOffset.json``
    (delay_offsets) and a client's ``offsets.json`` (client_offsets). A ``.gz`` suffix on a
    read kind is accepted (``is_gzip``); ``.tmp`` files and every other name are skipped
    with the reason.
    """
    if "/" in file_name or not file_name:
        raise ValueError(f"expected a file's base name, got {file_name!r}")
    name = file_name
    is_gzip = name.endswith(GZIP_SUFFIX)
    if is_gzip:
        name = name[: -len(GZIP_SUFFIX)]
    if name.endswith(TMP_SUFFIX):
        return _skipped(file_name, is_gzip, TMP_REASON)
    role: FileRole = "main"
    if name.endswith(BAK_SUFFIX):
        name, role = name[: -len(BAK_SUFFIX)], "bak"
    if name in READ_FILES:
        return ConfigFileKind(file_name, READ_FILES[name], role, is_gzip, None)
    if name in NOT_OFFSET_FILES:
        reason = NOT_OFFSET_FILES[name]
        return _skipped(file_name, is_gzip, reason + (" (backup copy)" if role == "bak" else ""))
    return _skipped(file_name, is_gzip, UNKNOWN_REASON)


def partition_config_files(file_names: Iterable[str]) -> tuple[list[ConfigFileKind], list[ConfigFileKind]]:
    """Split base names into (read, skipped), logging each skipped file with its reason."""
    read: list[ConfigFileKind] = []
    skipped: list[ConfigFileKind] = []
    for file_name in file_names:
        kind = classify_config_file(file_name)
        if kind.is_read:
            read.append(kind)
        else:
            log.info("skipping %s: %s", file_name, kind.skip_reason)
            skipped.append(kind)
    return read, skipped
