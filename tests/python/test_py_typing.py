"""Issue 14 item 11: the package ships type hints (PEP 561 marker py.typed) and the public
signatures' annotations resolve; Reader and Converter share one handle base class."""
import os
import typing

import libdata
from libdata import _lib


def test_py_typed_marker_ships_with_the_package():
    assert os.path.isfile(os.path.join(os.path.dirname(libdata.__file__), "py.typed"))


def test_public_signatures_are_annotated():
    for fn in (libdata.Reader.__init__, libdata.Reader.next_batch, libdata.Reader.get,
               libdata.convert, libdata.Converter.run, libdata.Converter.set, libdata.describe,
               libdata.convert_params, libdata.reader_params):
        hints = typing.get_type_hints(fn)
        assert "return" in hints, fn.__qualname__


def test_reader_and_converter_share_one_handle_class():
    assert issubclass(libdata.Reader, _lib.Handle)
    assert issubclass(libdata.Converter, _lib.Handle)
    for name in ("close", "_calling", "_handle", "__exit__", "__del__"):
        assert name not in vars(libdata.Reader) and name not in vars(libdata.Converter), name
