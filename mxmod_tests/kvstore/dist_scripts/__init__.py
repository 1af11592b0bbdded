"""Programs that the distributed kvstore tests run under MPI (see runner.py)."""
