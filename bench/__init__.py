"""Coco's benchmarks: one script per figure, ``python -m bench.run`` for the table."""
