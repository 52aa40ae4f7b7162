"""Issue 14 items 1 and 2: dataconv --help, dataconv bench --help and the Python keyword
arguments are generated from the library's parameter tables (ld_convert_params,
ld_reader_params), which give each parameter's type, unit, default and enum choices; enum
values of another enum are refused.

The tables are read through ctypes; the help texts through the built dataconv; the Python side
by opening a Reader / Converter with every table parameter given by name at its table default
and reading it back."""
import ctypes
import inspect
import os
import re
import subprocess

import pytest

import libdata
from libdata import _lib

DATACONV = os.environ.get("DATACONV")
TESTDATA = os.environ.get("LD_TEST_DATA", "")
RAW = os.path.join(TESTDATA, "reader", "raw_ours.h5")

needs_cli = pytest.mark.skipif(not DATACONV, reason="DATACONV not set")


def help_rows(args):
    """{flag: (syntax, text)} of the generated "Parameters" section of a help text."""
    out = subprocess.run([DATACONV, *args], capture_output=True, text=True, check=True).stdout
    section = out[out.index("\nParameters ("):]
    rows, cur = {}, None
    for line in section.splitlines()[1:]:
        m = re.match(r"^  (--[a-z0-9-]+)(?: (\S+))?(?: +(.*))?$", line)
        if m:
            cur = m.group(1)
            rows[cur] = [m.group(2) or "", m.group(3) or ""]
        elif cur and line.startswith(" " * 27):
            rows[cur][1] += " " + line.strip()
    return {k: (s, " ".join(t.split())) for k, (s, t) in rows.items()}


def expected_default(p):
    if p.type == "bool":
        return "on" if p.default else "off"
    if p.type in ("floats", "string") and not p.default:
        return "none"
    if p.type == "double":
        return f"{p.default:g}"
    if p.type == "floats":
        return ",".join(f"{v:g}" for v in p.default)
    text = str(p.default)
    return f"{text} {p.unit}" if p.type == "int" and p.unit else text


def check_help(rows, table):
    assert set(rows) == {"--" + n.replace("_", "-") for n in table}, \
        "help lists other parameters than the table"
    for name, p in table.items():
        syntax, text = rows["--" + name.replace("_", "-")]
        assert text.startswith(p.help), (name, text)
        assert text.endswith(f"(default {expected_default(p)})"), (name, text)
        if p.type == "enum":
            assert syntax.split("|") == list(p.choices), (name, syntax)
        if p.type == "bool":
            assert syntax == "", (name, syntax)


def test_tables_describe_every_parameter():
    for kind in ("convert", "reader"):
        table = _lib.param_table(kind)
        assert table
        for name, p in table.items():
            assert p.help and p.type in ("int", "bool", "enum", "double", "floats", "string")
            if p.type == "enum":
                assert p.default in p.choices, (kind, name)
                assert all(p.min <= v <= p.max for v in p.choices.values()), (kind, name)


def test_enum_values_are_distinct_across_enums():
    """Every enum has its own values: a value of one enum is never a choice of another."""
    seen = {}
    for kind in ("convert", "reader"):
        for name, p in _lib.param_table(kind).items():
            for cname, v in p.choices.items():
                enum = {"dtype": "dtype", "label_dtype": "dtype", "mask_type": "dtype"}.get(name, name)
                if v in seen:
                    assert seen[v] == enum, (v, seen[v], enum)
                seen[v] = enum


@needs_cli
def test_dataconv_help_is_the_convert_table():
    check_help(help_rows(["--help"]), _lib.param_table("convert"))


@needs_cli
def test_bench_help_is_the_reader_table():
    check_help(help_rows(["bench", "--help"]), _lib.param_table("reader"))


@needs_cli
def test_every_convert_parameter_is_a_flag(tmp_path):
    """Each table parameter is accepted by dataconv as a flag at its default (out of range or a
    wrong choice name is a usage error naming what it accepts)."""
    table = _lib.param_table("convert")
    args = []
    for name, p in table.items():
        flag = "--" + name.replace("_", "-")
        if p.type == "bool":
            args.append(f"{flag}=false")
        elif p.type != "string":
            args += [flag, str(p.default)]
    src = os.path.join(TESTDATA, "tree")
    r = subprocess.run([DATACONV, "-q", src, str(tmp_path / "o.h5"), *args, "--resize", "8"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([DATACONV, src, str(tmp_path / "p.h5"), "--resize-mode", "sideways"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "expected squash, crop, pad or max" in r.stderr, r.stderr


@pytest.mark.skipif(not os.path.exists(RAW), reason="LD_TEST_DATA fixtures missing")
def test_reader_keywords_are_the_reader_table():
    """Reader takes every table parameter by its table name; the named keywords that are table
    parameters default to None (= the library's default, not a Python copy of it)."""
    table = _lib.param_table("reader")
    sig = inspect.signature(libdata.Reader.__init__).parameters
    for name, prm in sig.items():
        if name in table and name != "epoch":
            assert prm.default is None, f"Reader({name}=...) repeats a default: {prm.default!r}"
    given = {n: p.default for n, p in table.items()
             if p.default is not None and n not in ("epoch", "data_name", "label_name")}
    with libdata.Reader(RAW, **given) as r:
        for n, p in table.items():
            if p.type in ("int", "bool"):
                assert r.get(n) == p.default, n
            elif p.type == "enum":
                assert r.get(n) == p.choices[p.default], n


def test_convert_keywords_are_the_convert_table():
    table = _lib.param_table("convert")
    sig = inspect.signature(libdata.convert).parameters
    for name, prm in sig.items():
        if name in table:
            assert prm.default is None, f"convert({name}=...) repeats a default: {prm.default!r}"
    given = {n: p.default for n, p in table.items() if p.default is not None}
    with libdata.Converter(**given) as c:
        for n, p in table.items():
            if p.type in ("int", "bool"):
                assert c.get(n) == p.default, n
            elif p.type == "enum":
                assert c.get(n) == p.default, n


def test_a_value_of_another_enum_is_refused():
    """LD_R_CHANNEL_ORDER no longer takes LD_ORDER_SHUFFLE (issue 14 item 2)."""
    table = _lib.param_table("reader")
    h = _lib.api.ld_reader_create()
    try:
        with pytest.raises(libdata.LibdataError) as e:
            _lib.api.ld_reader_set(h, table["channel_order"].id, table["order"].choices["shuffle"])
        assert e.value.code == libdata.LD_EINVAL
        assert "channel_order" in e.value.message and "another enum" in e.value.message
        # and the setter of another type is named
        with pytest.raises(libdata.LibdataError) as e:
            _lib.api.ld_reader_set_str(h, table["scale"].id, b"0.5")
        assert "ld_reader_set_double" in e.value.message
    finally:
        _lib.api.ld_reader_free(ctypes.c_void_p(h))
    with pytest.raises(ValueError, match="channel_order"):
        libdata.Reader(RAW, channel_order="shuffle")
