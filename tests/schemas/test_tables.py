"""The table declarations (schemas.tables) are consistent with themselves."""

from __future__ import annotations

import pytest

from schemas.tables import ALL_TABLES, QUALITY_TABLES, STAGED_GOLD, TableSpec

TABLES = (*ALL_TABLES, *QUALITY_TABLES, STAGED_GOLD)


@pytest.mark.parametrize("spec", TABLES, ids=lambda spec: spec.path)
def test_every_named_column_is_a_column_of_the_table(spec: TableSpec):
    named = {
        *spec.keys,
        *spec.partition_by,
        *spec.high_cardinality,
        *([spec.event_time] if spec.event_time else []),
    }
    assert named <= set(spec.columns)
    assert not set(spec.high_cardinality) & set(spec.partition_by)
