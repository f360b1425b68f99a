"""Protein database search: every query against every database sequence, the best hits
re-aligned, with BLAST's statistics. The public function is :func:`readalign.search`
(:func:`readalign.dbsearch.api.search`)."""
