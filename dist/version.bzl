"""The version of every wheel the repository builds (tests/dist checks hk.__version__ says the same)."""

VERSION = "0.1.0"
