"""Many frames of one shape as one."""

from __future__ import annotations

from pyspark.sql import DataFrame


def union_all(frames: list[DataFrame]) -> DataFrame:
    """The rows of every frame of ``frames`` (at least one; matched by column name), in order.

    PySpark's union takes two frames, and the JVM analyses the whole plan of each union it
    builds: a chain of n unions, each over all the frames before it, analyses those frames
    about n²/2 times over. Unions of neighbours, then of those pairs, and so on analyse each
    frame about log₂ n times; Spark's optimizer flattens either into one union of every frame
    (docs/experiments.md, "Unions of neighbours").
    """
    if not frames:
        raise ValueError("union_all needs at least one frame")
    while len(frames) > 1:
        frames = [
            frames[i].unionByName(frames[i + 1]) if i + 1 < len(frames) else frames[i]
            for i in range(0, len(frames), 2)
        ]
    return frames[0]
