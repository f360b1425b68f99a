"""Word-list edit distances: ``cdist``, ``readalign distance`` and their CPU and GPU backends."""
