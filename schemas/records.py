"""Input record contracts: what a capture tool must write for OffsetLake to ingest it.

RocketMQ keeps no log of offset commits, so OffsetLake defines one. A broker hook, a
proxy or an agent that observes commits writes them as JSON lines, one
:class:`CommitEvent` object per line, UTF-8, optionally gzipped, under
``<landing>/commits/<cluster>/**/*.jsonl[.gz]``. For example::

    {"committed_at": "2021-06-03T16:00:00Z", "broker": "broker-a", "client_host": "10.0.0.7:35394",
     "topic": "orders", "consumer_group": "billing", "queue_id": 5, "offset": 2611518, "path": "pull_piggyback"}
    {"committed_at": 1622736000000, "broker": "broker-a", "topic": "orders", "consumer_group": "billing",
     "queue_id": 5, "offset": 2611530, "agent": "hook-1.2"}

This model is the documented contract and the reference for tests; the Spark parser
(``pipelines.ingest.commit_events``) applies the same rules column-wise and does not call it.
Fields not named here are allowed and kept (they land in ``extra_fields``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator

# mqadmin consumerConnection's ConsumeType and MessageModel: pull and lite-pull consumers (which
# commit with increaseOnly=false and may seek back), push consumers, 5.x POP consumers
PULL, PUSH, POP = "CONSUME_ACTIVELY", "CONSUME_PASSIVELY", "CONSUME_POP"
CONSUME_TYPES = (PULL, PUSH, POP)
MESSAGE_MODELS = ("CLUSTERING", "BROADCASTING")
OFFSET_LIMIT = 2**53  # exclusive: offsets beyond what every JSON reader holds exactly are absurd
MAX_QUEUE_ID = 65535
MAX_EPOCH_MILLIS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
ISO_INSTANT_TEXT = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$"
EPOCH_MILLIS_DIGITS = r"^\d{1,15}$"
ISO_INSTANT = re.compile(ISO_INSTANT_TEXT)
EPOCH_MILLIS_TEXT = re.compile(EPOCH_MILLIS_DIGITS)
COMMIT_PATHS = ("update_offset", "pull_piggyback")
_NOT_BLANK = r"\S"


@dataclass(frozen=True)
class ContractField:
    """One field of a commit-event line, as the line parsers check it (the Spark parse in
    pipelines.ingest.commit_events, the Arrow pre-parse in pipelines.ingest.commit_preparse;
    :class:`CommitEvent` below states the same contract for people and tests).

    ``kind``: ``time`` (an ISO-8601 string or epoch milliseconds, as a JSON integer or digits),
    ``string`` (not blank) or ``integer`` (in ``[low, high)``). ``values``: the only texts a
    string may hold. ``invalid``: the rejection's reason for a value out of range or unknown.
    """

    name: str
    kind: Literal["time", "string", "integer"]
    required: bool = False
    low: int | None = None
    high: int | None = None
    values: tuple[str, ...] = ()
    invalid: str | None = None


COMMIT_FIELDS = (
    ContractField("committed_at", "time", required=True, invalid="unparseable committed_at"),
    ContractField("broker", "string", required=True),
    ContractField("client_host", "string"),
    ContractField("topic", "string", required=True),
    ContractField("consumer_group", "string", required=True),
    ContractField("queue_id", "integer", required=True, low=0, high=MAX_QUEUE_ID + 1,
                  invalid=f"queue_id not an integer in [0, {MAX_QUEUE_ID}]"),
    ContractField("offset", "integer", required=True, low=0, high=OFFSET_LIMIT, invalid="offset not an integer in [0, 2^53)"),
    ContractField("path", "string", values=COMMIT_PATHS,
                  invalid="unknown path value (expected update_offset or pull_piggyback)"),
)  # fmt: skip
KNOWN_FIELDS = tuple(f.name for f in COMMIT_FIELDS)
REQUIRED_FIELDS = tuple(f.name for f in COMMIT_FIELDS if f.required)
STRING_FIELDS = tuple(f.name for f in COMMIT_FIELDS if f.kind == "string")
RANGED_FIELDS = tuple(f for f in COMMIT_FIELDS if f.kind == "integer")
# fields a line may give as a JSON integer
INTEGER_FIELDS = tuple(f.name for f in COMMIT_FIELDS if f.kind in ("time", "integer"))


def _from_epoch_millis(millis: int) -> datetime:
    if not 0 <= millis <= MAX_EPOCH_MILLIS:
        raise ValueError(f"epoch milliseconds {millis} out of range [0, {MAX_EPOCH_MILLIS}]")
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis)


def _from_iso(text: str) -> datetime:
    match = ISO_INSTANT.match(text)
    if not match:
        raise ValueError(
            "committed_at must be ISO-8601 with Z or an offset (2021-06-03T16:00:00Z) or epoch milliseconds"
        )
    fraction = match.group(1) or ""
    # Python keeps microseconds: cut a nanosecond fraction to six digits, as Spark does.
    trimmed = text.replace(fraction, fraction[:7], 1) if len(fraction) > 7 else text
    return datetime.fromisoformat(trimmed.replace("Z", "+00:00")).astimezone(UTC)


class CommitEvent(BaseModel):
    """One observed consumer-offset commit (one JSON object per line)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    committed_at: datetime = Field(
        description=(
            "When the broker accepted the commit. Either an ISO-8601 instant with 'Z' or a UTC offset "
            "('2021-06-03T16:00:00Z', '2021-06-04T00:00:00.250+08:00'; up to nanoseconds, kept to "
            "microseconds), or epoch milliseconds as a JSON integer or a string of digits. A local time "
            "without offset is rejected: it is ambiguous."
        )
    )
    broker: StrictStr = Field(
        pattern=_NOT_BLANK, description="Broker name (brokerName) that stored the offset."
    )
    client_host: StrictStr | None = Field(
        default=None,
        pattern=_NOT_BLANK,
        description="Address of the committing client as the broker saw it ('ip:port'), when known.",
    )
    topic: StrictStr = Field(
        pattern=_NOT_BLANK, description="Topic of the queue (may be a %RETRY% or %DLQ% topic)."
    )
    consumer_group: StrictStr = Field(pattern=_NOT_BLANK, description="Consumer group that committed.")
    queue_id: StrictInt = Field(
        ge=0, le=MAX_QUEUE_ID, description="Queue id within the topic on that broker."
    )
    offset: StrictInt = Field(
        ge=0,
        lt=OFFSET_LIMIT,
        description="Committed offset: the next ConsumeQueue index to consume (not a CommitLog byte position).",
    )
    path: Literal["update_offset", "pull_piggyback"] | None = Field(
        default=None,
        description=(
            "How the commit reached the broker: 'update_offset' (UPDATE_CONSUMER_OFFSET request, the "
            "client's persistAll every 5 s) or 'pull_piggyback' (commit offset carried by a PULL_MESSAGE "
            "request). Omit when unknown."
        ),
    )

    @field_validator("committed_at", mode="before")
    @classmethod
    def _instant(cls, value: object) -> datetime:
        if isinstance(value, bool):
            raise ValueError("committed_at must be a string or an integer, not a boolean")
        if isinstance(value, int):
            return _from_epoch_millis(value)
        if isinstance(value, str):
            if EPOCH_MILLIS_TEXT.match(value):
                return _from_epoch_millis(int(value))
            return _from_iso(value)
        raise ValueError("committed_at must be an ISO-8601 string or epoch milliseconds")

    @property
    def extra_fields(self) -> dict[str, object]:
        """Fields the contract does not name, as given."""
        return dict(self.model_extra or {})
