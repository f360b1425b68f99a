"""``python -m benchmarks.api_calls``, the single-call API timer RESULTS.md's A/Bs cite, runs."""

from __future__ import annotations

import re

from benchmarks import api_calls


def test_each_input_form_gets_its_times(capsys):
    api_calls.main(["--pairs", "300", "--runs", "2", "--backend", "cpu", "--mode", "edit"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("device: CPU, ")
    for form, line in zip(("lists", "S arrays"), lines[1:], strict=True):
        found = re.fullmatch(rf"edit from {form}: best ([\d.]+) ms \([\d.]+M pairs/s\), "
                             r"median ([\d.]+) ms of 2", line)
        assert found and 0 < float(found[1]) <= float(found[2]), line
