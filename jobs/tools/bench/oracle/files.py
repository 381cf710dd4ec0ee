"""Landed files as DuckDB sees them: which files, the segments of their paths, their lines."""

from __future__ import annotations

from pathlib import Path


class ReferenceInputError(ValueError):
    """The landing directory holds files the DuckDB reference does not read."""


def landed_files(landing: Path, pattern: str) -> list[str]:
    """Files under ``landing`` matching ``pattern``, as the ingest stage names them (sorted)."""
    found = sorted(str(p) for p in landing.glob(pattern) if p.is_file())
    compressed = [f for f in found if f.endswith(".gz")]
    if compressed:
        raise ReferenceInputError(
            f"the DuckDB reference reads uncompressed files only, found {compressed[0]}"
        )
    return found


def path_part(landing: Path, index: int) -> str:
    """SQL for segment ``index`` (1-based) of ``source_file`` relative to the landing root."""
    return f"split_part(substr(source_file, {len(str(landing)) + 2}), '/', {index})"


def lines_source(files: list[str], parameter: str) -> str:
    """A subquery of ``(source_file, line_no, line, _file_hash)``: one row per non-blank line of
    the files bound to ``$<parameter>``, trailing CR removed. Files are split in parallel."""
    if not files:
        return "(SELECT '' AS source_file, 0 AS line_no, '' AS line, '' AS _file_hash WHERE false)"
    return f"""(
        SELECT source_file, line_no, regexp_replace(line, '\\r$', '') AS line, _file_hash
        FROM (
            SELECT filename AS source_file, _file_hash, generate_subscripts(parts, 1) AS line_no, unnest(parts) AS line
            FROM (SELECT filename, sha256(content) AS _file_hash, string_split(content, chr(10)) AS parts
                  FROM read_text(${parameter}))
        )
        WHERE trim(line) <> '')"""


def bound(**file_lists: list[str]) -> dict[str, list[str]] | None:
    """Parameters for the non-empty file lists (an empty one is not referenced by its query)."""
    return {name: files for name, files in file_lists.items() if files} or None
