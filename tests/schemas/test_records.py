"""The documented commit-event contract (no Spark): what it accepts, what it rejects."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from schemas.records import CommitEvent
from tests.pipelines.ingest.lines_helper import BROKEN_LINES, broken_reasons

BASE = {
    "broker": "broker-a",
    "topic": "orders",
    "consumer_group": "billing",
    "queue_id": 5,
    "offset": 2611518,
}
UTC = UTC


def _strict_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    names = [name for name, _ in pairs]
    if len(names) != len(set(names)):
        raise ValueError("duplicate field")
    return dict(pairs)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def load_line(text: str) -> object:
    """Strict JSON (RFC 8259) as the parser reads a line: no duplicate names, no NaN."""
    return json.loads(text, object_pairs_hook=_strict_object, parse_constant=_reject_constant)


@pytest.mark.parametrize(
    ("committed_at", "expected"),
    [
        ("2021-06-04T00:00:00+08:00", datetime(2021, 6, 3, 16, 0, tzinfo=UTC)),
        ("2021-06-03T16:00:00Z", datetime(2021, 6, 3, 16, 0, tzinfo=UTC)),
        ("2021-06-03T16:00:00.123456789Z", datetime(2021, 6, 3, 16, 0, 0, 123456, tzinfo=UTC)),
        (1622736000123, datetime(2021, 6, 3, 16, 0, 0, 123000, tzinfo=UTC)),
        ("1622736000000", datetime(2021, 6, 3, 16, 0, tzinfo=UTC)),
        (0, datetime(1970, 1, 1, tzinfo=UTC)),
    ],
)
def test_committed_at_forms(committed_at, expected):
    assert CommitEvent.model_validate({**BASE, "committed_at": committed_at}).committed_at == expected


def test_whole_event_with_optional_and_extra_fields():
    event = CommitEvent.model_validate(
        load_line(
            '{"committed_at": "2021-06-03T16:00:00Z", "broker": "broker-a", "client_host": "10.0.0.7:35394",'
            ' "topic": "%RETRY%billing", "consumer_group": "billing", "queue_id": 0, "offset": 9007199254740991,'
            ' "path": "pull_piggyback", "agent": "hook-1.2", "tags": {"zone": ["a"]}}'
        )
    )
    assert event.model_dump() == {
        "committed_at": datetime(2021, 6, 3, 16, 0, tzinfo=UTC),
        "broker": "broker-a",
        "client_host": "10.0.0.7:35394",
        "topic": "%RETRY%billing",
        "consumer_group": "billing",
        "queue_id": 0,
        "offset": 2**53 - 1,
        "path": "pull_piggyback",
        "agent": "hook-1.2",
        "tags": {"zone": ["a"]},
    }
    assert event.extra_fields == {"agent": "hook-1.2", "tags": {"zone": ["a"]}}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"offset": "2611518"}, "offset"),
        ({"offset": 5.0}, "offset"),
        ({"offset": True}, "offset"),
        ({"offset": 2**53}, "offset"),
        ({"queue_id": 65536}, "queue_id"),
        ({"topic": " "}, "topic"),
        ({"client_host": ""}, "client_host"),
        ({"path": "rebalance"}, "path"),
        ({"committed_at": "2021-06-03T16:00:00"}, "committed_at"),
        ({"committed_at": "2021-06-03 16:00:00Z"}, "committed_at"),
        ({"committed_at": 1622736000.5}, "committed_at"),
        ({"committed_at": False}, "committed_at"),
        ({"committed_at": 253_402_300_800_000}, "committed_at"),
    ],
)
def test_rejected_values_name_their_field(change, field):
    with pytest.raises(ValidationError) as caught:
        CommitEvent.model_validate({**BASE, "committed_at": 0, **change})
    assert [error["loc"][0] for error in caught.value.errors()] == [field]


def test_every_broken_commit_line_is_rejected_by_the_contract_too():
    """The model and the Spark parser agree: no corpus line is a valid commit event."""
    accepted = []
    for name in broken_reasons("commit_events"):
        try:
            text = (BROKEN_LINES / name).read_bytes().decode("utf-8").strip()
            CommitEvent.model_validate(load_line(text))
        except (UnicodeDecodeError, ValueError):  # ValidationError is a ValueError
            continue
        accepted.append(name)
    assert accepted == []
