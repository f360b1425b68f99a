"""Settings the benchmarks can alternate run by run (``--alternate KNOB=V1,V2,...``): the
pipeline benchmark's, and the GPU pipeline's for ``benchmarks.probes.api_calls``.

Host speed differs by up to 2x between machines of the same kind, so a change is
judged by runs that alternate in one process on one machine. Each knob is a context
manager that holds one value for the length of one run.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator

STAGE_THREADS = ("readalign-candidates", "readalign-read", "readalign-pairs",
                 "readalign-assemble")
"""The stage threads whose numba thread count ``stage-threads`` sets."""


@contextlib.contextmanager
def _patched(owner, **values) -> Iterator[None]:
    """``owner``'s attributes set to ``values`` for the length of the block, then restored."""
    saved = {name: getattr(owner, name) for name in values}
    for name, value in values.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(owner, name, value)


def _loop_threads(value: str) -> contextlib.AbstractContextManager:
    """Threads of the align loop's own parallel regions on the GPU (``GPU_LOOP_THREADS``)."""
    from readalign.bam import run as runner

    return _patched(runner, GPU_LOOP_THREADS=int(value))


def _stage_threads(value: str) -> contextlib.AbstractContextManager:
    """numba threads of the candidates, read, pairs and assemble threads."""
    from readalign.bam import run as runner

    n = int(value)
    prefetch, consumer = runner.prefetch, runner.Consumer

    def fewer(name: str, threads: int) -> int:
        return n if name in STAGE_THREADS else threads

    return _patched(
        runner,
        prefetch=lambda items, threads, depth=1, name="readalign-reader": prefetch(
            items, fewer(name, threads), depth=depth, name=name),
        Consumer=lambda fn, threads, depth=2, name="readalign-writer": consumer(
            fn, fewer(name, threads), depth, name=name))


def _bgzf_threads(value: str) -> contextlib.AbstractContextManager:
    """Threads that compress the BAM (``bgzf.deflate_threads`` of the run's ``--threads``
    otherwise)."""
    from readalign.bam import run as runner

    output = runner.Output
    return _patched(runner, Output=lambda path, fmt, sort, threads, level=None, writer="auto",
                    deflate=None, reference=None: output(path, fmt, sort, threads, level, writer,
                                                         int(value), reference))


@contextlib.contextmanager
def _switch_interval(value: str) -> Iterator[None]:
    """The interpreter's thread switch interval, in milliseconds (5 by default)."""
    saved = sys.getswitchinterval()
    sys.setswitchinterval(float(value) / 1000)
    try:
        yield
    finally:
        sys.setswitchinterval(saved)


def _pipeline_lag(value: str) -> contextlib.AbstractContextManager:
    """How many chunks behind the GPU pipeline's loop waits (``gpu.pipeline.LAG``), with the
    slots that needs."""
    from readalign.engine.gpu import pipeline

    lag = int(value)
    return _patched(pipeline, LAG=lag, SLOTS=pipeline.slots_for(lag))


def _chunk_mb(value: str) -> contextlib.AbstractContextManager:
    """Sequence megabytes per GPU pipeline chunk (``gpu.sizing.CHUNK_BYTES``)."""
    from readalign.engine.gpu import sizing

    return _patched(sizing, CHUNK_BYTES=int(value) << 20)


KNOBS: dict[str, Callable[[str], contextlib.AbstractContextManager]] = {
    "loop-threads": _loop_threads,
    "stage-threads": _stage_threads,
    "bgzf-threads": _bgzf_threads,
    "switch-interval": _switch_interval,
    "pipeline-lag": _pipeline_lag,
    "chunk-mb": _chunk_mb,
}


def parse(spec: str) -> tuple[str, list[str]]:
    """``KNOB=V1,V2,...`` as (knob, values); ValueError naming what is wrong."""
    name, sep, values = spec.partition("=")
    if not sep or name not in KNOBS or not values:
        raise ValueError(f"--alternate takes KNOB=V1,V2,... with KNOB one of "
                         f"{', '.join(KNOBS)}; got {spec!r}")
    return name, values.split(",")


def checked(spec: str) -> str:
    """``spec`` as it is once :func:`parse` accepts it: the ``type`` of an ``--alternate``
    option, so a bad one is a usage error."""
    try:
        parse(spec)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return spec
