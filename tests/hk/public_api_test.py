"""Every public name of `hk` is exercised by some test: a name nobody tests fails here."""

import os
import re

import hk

HERE = os.path.dirname(os.path.abspath(__file__))


def test_every_public_name_has_a_test():
    sources = ""
    for name in sorted(os.listdir(HERE)):
        if name.endswith("_test.py") and name != os.path.basename(__file__):
            with open(os.path.join(HERE, name)) as f:
                sources += f.read()
    untested = [n for n in hk.__all__ if not re.search(r"\bhk\.%s\b" % re.escape(n), sources)]
    assert untested == [], "public names without a test in tests/hk: %s" % ", ".join(untested)


def test_all_lists_what_the_package_exports():
    for name in hk.__all__:
        assert getattr(hk, name) is not None
    assert sorted(dir(hk)) == sorted(hk.__all__)
