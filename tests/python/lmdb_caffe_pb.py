"""Caffe's Datum and BlobProto messages for cross-checks, compiled at import time.

The .proto text below declares the two messages exactly as caffe.proto does (field numbers,
types, packed options); protoc compiles it into a temporary directory, so the decoder used
by the tests is python3-protobuf's, independent of libdata's hand-written codec.
"""
import importlib
import os
import shutil
import subprocess
import sys
import tempfile

PROTO = """
syntax = "proto2";
package caffe;
message BlobShape { repeated int64 dim = 1 [packed = true]; }
message BlobProto {
  optional BlobShape shape = 7;
  repeated float data = 5 [packed = true];
  repeated float diff = 6 [packed = true];
  repeated double double_data = 8 [packed = true];
  repeated double double_diff = 9 [packed = true];
  optional int32 num = 1 [default = 0];
  optional int32 channels = 2 [default = 0];
  optional int32 height = 3 [default = 0];
  optional int32 width = 4 [default = 0];
}
message Datum {
  optional int32 channels = 1;
  optional int32 height = 2;
  optional int32 width = 3;
  optional bytes data = 4;
  optional int32 label = 5;
  repeated float float_data = 6;
  optional bool encoded = 7 [default = false];
}
"""

_tmp = tempfile.mkdtemp(prefix="ld_caffe_pb_")
with open(os.path.join(_tmp, "ld_caffe.proto"), "w") as f:
    f.write(PROTO)
subprocess.run(["protoc", "-I", _tmp, "--python_out", _tmp, os.path.join(_tmp, "ld_caffe.proto")],
               check=True)
sys.path.insert(0, _tmp)
_pb = importlib.import_module("ld_caffe_pb2")
sys.path.remove(_tmp)  # the module is loaded: its folder goes (each import made one before)
shutil.rmtree(_tmp)
Datum = _pb.Datum
BlobProto = _pb.BlobProto
BlobShape = _pb.BlobShape
