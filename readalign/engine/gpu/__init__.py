"""The pair engine's GPU backend: one pipeline over CUDA streams, and the kernels' steps it runs.

* :mod:`.sizing`: every size the backend picks (host batches, device batches, chunks, the
  launch grid), given what one lane needs;
* :mod:`.pipeline`: :func:`~.pipeline.run_pipeline`, chunks of a length-sorted batch over a
  few streams, each through four steps (stage, launch, follow, collect);
* :mod:`.chunks`: a chunk, the slot (stream, device pool, pinned buffers) it runs in, and
  its staging into pinned buffers;
* :mod:`.edit` and :mod:`.scored`: the steps of the edit-distance and of the scored
  kernels (:class:`~.edit.EditSteps`, :class:`~.scored.ScoredSteps`: what a lane needs, the
  launches, the copies back and the placing of results);
* :mod:`.run_store`: a batch's CIGAR runs, written chunk by chunk where the call returns them.

:mod:`readalign.engine.batching` makes the steps object for a job and hands it to
``run_pipeline``; nothing here imports the batching layer, and the pipeline knows no kernel.
Importing this package loads nothing: numba-cuda comes in with the pipeline and the steps,
only when a GPU is used.
"""
