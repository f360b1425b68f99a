"""What every benchmark JSON records about where it was measured (``benchmarks._provenance``)."""

from __future__ import annotations

import datetime
import subprocess

from conftest import REPO

from benchmarks._provenance import provenance


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=REPO,
                          check=True).stdout.strip()


def test_the_fields_name_the_commit_the_command_and_the_time():
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    got = provenance("benchmarks.bench", ["--pairs", "10", "--json", "a b.json"])
    after = datetime.datetime.now(datetime.UTC)
    assert got["commit"] == _git("rev-parse", "--short", "HEAD")
    assert got["uncommitted_changes"] == bool(_git("status", "--porcelain",
                                                   "--untracked-files=no"))
    assert got["command"] == "python -m benchmarks.bench --pairs 10 --json 'a b.json'"
    assert before <= datetime.datetime.fromisoformat(got["date"]) <= after
    assert got["host"]
