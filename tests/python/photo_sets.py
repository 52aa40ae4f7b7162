"""The fixture photos (LD_TEST_DATA/photos, made by tests/data/make_fixtures.py) converted by
dataconv (DATACONV), for the suites that read dataconv's own output of real photographs."""
import os
import subprocess

import pytest

TESTDATA = os.environ.get("LD_TEST_DATA", "")
PHOTOS = os.path.join(TESTDATA, "photos")
DATACONV = os.environ.get("DATACONV")

# the suites' pytestmark: without the photos or dataconv there is nothing to test
needed = pytest.mark.skipif(not (os.path.isdir(PHOTOS) and DATACONV),
                            reason="LD_TEST_DATA (made fixtures) and DATACONV must be set")


def convert(tmp, name, *flags):
    """dataconv PHOTOS TMP/NAME --flat FLAGS...; returns the output path."""
    out = os.path.join(tmp, name)
    subprocess.run([DATACONV, PHOTOS, out, "--flat", *flags], check=True, capture_output=True)
    return out
