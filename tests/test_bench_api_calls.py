"""``python -m benchmarks.probes.api_calls``, the single-call API timer RESULTS.md's A/Bs cite, runs."""

from __future__ import annotations

import re

from benchmarks.probes import api_calls


def test_each_input_form_gets_its_times(capsys):
    api_calls.main(["--pairs", "300", "--runs", "2", "--backend", "cpu", "--mode", "edit"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("device: CPU, ")
    for form, line in zip(("lists", "S arrays"), lines[1:], strict=True):
        found = re.fullmatch(rf"edit from {form}: best ([\d.]+) ms \([\d.]+M pairs/s\), "
                             r"median ([\d.]+) ms of 2", line)
        assert found and 0 < float(found[1]) <= float(found[2]), line


def test_alternated_values_each_get_their_times(capsys):
    api_calls.main(["--pairs", "200", "--runs", "1", "--backend", "cpu", "--mode", "edit",
                    "--alternate", "pipeline-lag=1,2"])
    lines = capsys.readouterr().out.splitlines()[1:]
    want = [(form, lag) for form in ("lists", "S arrays") for lag in (1, 2)]
    for (form, lag), line in zip(want, lines, strict=True):
        assert re.fullmatch(rf"edit from {form} \(pipeline-lag={lag}\): best [\d.]+ ms "
                            r"\([\d.]+M pairs/s\), median [\d.]+ ms of 2", line), line
