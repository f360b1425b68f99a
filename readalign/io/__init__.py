"""Input readers of the align pipeline: reads, reference and candidates, all streaming."""
