"""hk-dsl: tile-level AMD GPU kernels written in Python."""

__version__ = "0.1.0"
