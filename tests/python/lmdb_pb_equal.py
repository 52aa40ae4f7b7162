#!/usr/bin/python3
"""Does FILE hold exactly protobuf's serialization of a Datum with these fields?

Usage: lmdb_pb_equal.py FILE CHANNELS HEIGHT WIDTH LABEL ENCODED DATA_LEN
The data bytes are taken from the parsed message (checked for length); the message is then
rebuilt with python3-protobuf from the expected fields and serialized: exit 0 when equal.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lmdb_caffe_pb import Datum  # noqa: E402

raw = open(sys.argv[1], "rb").read()
c, h, w, label, enc, dlen = (int(x) for x in sys.argv[2:8])
p = Datum()
p.ParseFromString(raw)
assert len(p.data) == dlen, (len(p.data), dlen)
q = Datum(channels=c, height=h, width=w, data=p.data, label=label, encoded=bool(enc))
assert q.SerializeToString() == raw, (q.SerializeToString()[:40], raw[:40])
assert p.SerializeToString() == raw
