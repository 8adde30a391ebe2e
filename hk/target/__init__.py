"""Facts about the GPU targets hk-dsl compiles for, read from targets.json (see facts.py)."""
