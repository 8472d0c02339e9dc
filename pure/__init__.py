"""panefleet's pure core: deterministic, total, no I/O.

Everything here takes data (raw tool output, file text, environment mappings, times and ids that
the shell observed) and returns data. The import contract in ``tests/core/test_purity.py`` enforces it.
"""
