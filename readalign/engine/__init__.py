"""The pair engine: pack sequences, sort and batch pairs, run a backend, gather the results."""
