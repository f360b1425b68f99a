"""The benchmarks' alternated settings: each holds its value for one run, where the
pipeline reads it, and gives the old one back."""

from __future__ import annotations

import sys

import numba
import pytest

from benchmarks import _knobs
from readalign.bam import run as runner


def _threads_in(name: str) -> tuple[int, int]:
    """numba threads of a prefetch thread and of a consumer thread named ``name``, made as
    the pipeline makes them (with 2 threads asked)."""
    made = list(runner.prefetch((numba.get_num_threads() for _ in range(1)), 2, name=name))
    seen: list[int] = []
    consumer = runner.Consumer(lambda _item: seen.append(numba.get_num_threads()), 2, name=name)
    consumer.put(0)
    consumer.close()
    return made[0], seen[0]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs numba's pool of 2+")
def test_stage_threads_reach_the_stage_threads_only():
    with _knobs.KNOBS["stage-threads"]("1"):
        assert _threads_in("readalign-read") == (1, 1)
        assert _threads_in("readalign-assemble") == (1, 1)
        assert _threads_in("readalign-write") == (2, 2)
    assert _threads_in("readalign-read") == (2, 2)


def test_loop_threads_and_switch_interval_hold_for_the_run():
    loop, switch = runner.GPU_LOOP_THREADS, sys.getswitchinterval()
    with _knobs.KNOBS["loop-threads"]("7"), _knobs.KNOBS["switch-interval"]("0.5"):
        assert runner.GPU_LOOP_THREADS == 7
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    assert (runner.GPU_LOOP_THREADS, sys.getswitchinterval()) == (loop, switch)


def test_bgzf_threads_size_the_writers_pool(tmp_path):
    with _knobs.KNOBS["bgzf-threads"]("3"):
        out = runner.Output(str(tmp_path / "o.bam"), "bam", False, 8, 1, "isal")
    try:
        assert out.writer._threads == 3 and out.threads == 8  # sorting keeps the run's threads
    finally:
        out.fail()
    assert not (tmp_path / "o.bam").exists()


@pytest.mark.parametrize("spec", ["loop-threads", "nothing=1,2", "loop-threads="])
def test_a_bad_spec_names_the_knobs(spec):
    with pytest.raises(ValueError, match="KNOB one of loop-threads, stage-threads"):
        _knobs.parse(spec)


def test_gpu_pipeline_knobs_hold_for_the_run():
    from readalign.engine.gpu import pipeline, sizing

    def settings() -> tuple[int, int, int]:
        return pipeline.LAG, pipeline.SLOTS, sizing.CHUNK_BYTES

    before = settings()
    with _knobs.KNOBS["pipeline-lag"]("1"), _knobs.KNOBS["chunk-mb"]("32"):
        assert settings() == (1, 3, 32 << 20)
    assert settings() == before
