"""Landed files' content hashes."""

from __future__ import annotations

import hashlib

from jobs.io.landing import HASH_THREADS, content_hash, content_hashes


def test_files_hashed_in_parallel_keep_their_order(tmp_path):
    paths = []
    for n in range(HASH_THREADS * 3):
        path = tmp_path / f"file-{n}"
        path.write_bytes(bytes([n]) * (n * 300_000 + 1))  # some over hashlib's GIL-free block size
        paths.append(path)
    expected = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert content_hashes(paths) == expected
    assert [content_hash(p) for p in paths] == expected
    assert content_hashes(paths[:1]) == expected[:1]
    assert content_hashes([]) == []
