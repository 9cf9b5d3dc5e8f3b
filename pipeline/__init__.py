"""mlrepro: reproducibility validation of MLPerf Inference results.

The library returns reports; only :mod:`pipeline.cli` prints and exits.
"""

__version__ = "0.1.0"
