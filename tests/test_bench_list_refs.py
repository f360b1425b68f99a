"""``python -m benchmarks.probes.list_refs``, the take and drop timer RESULTS.md cites, runs."""

from __future__ import annotations

import re

from benchmarks.probes import list_refs


def test_both_steps_get_their_times(capsys):
    list_refs.main(["--pairs", "2000", "--runs", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("host: ")
    for step, line in zip(("take with the header look", "drop"), lines[1:], strict=True):
        found = re.fullmatch(rf"{step}: best ([\d.]+) ms, median ([\d.]+) ms of 2", line)
        assert found and float(found[1]) <= float(found[2]), line
