#!/usr/bin/python3
"""Write the four measurement nets of issue 17 (tests/data/plan/nets/NET/) in their data-layer variants.

    plan_nets.py [OUTDIR]          (default: tests/data/plan/nets next to this script's checkout)

Each net NET gets, per variant V in {data, hdf5, libdata} (and hdf5big for caffenet):
    NET/V_train_val.prototxt   the net, TRAIN batch_size written as TRAIN_BATCH
    NET/V_solver.prototxt      its solver (net: "V_train_val.prototxt", paths relative to the run dir)
The committed files are this script's output; scripts/plan_measure.sh copies them into the dataset
directory and replaces TRAIN_BATCH with the measured batch size. The TEST batch is fixed per net
(so the slope of peak RSS over the TRAIN batch is the train net's per-sample cost alone).

Data-layer variants (same net body after the data layer, same blob shapes):
  data     Caffe's Data layer on an LMDB of 256x256 (or 32x32) images, crop + mean + scale in
           transform_param
  hdf5     Caffe's HDF5Data layer on dataconv --split files already at the crop size (HDF5Data has no
           transform_param), normalized by an in-place Power layer (x/256 - 0.5)
  hdf5big  (caffenet only) HDF5Data on ONE large file: the whole-file float32 copy dominates
  libdata  libdata's LibData layer (LD_PRELOAD) on the HDF5 file of full-size images, crop in the layer
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (input size of the stored images, crop, TEST batch or None, solver lines, body function)
SCALE = 0.00390625


def conv(name, bottom, n, k, s=1, p=0, group=1, bias=True, top=None):
    top = top or name
    extra = f" stride: {s}" if s != 1 else ""
    extra += f" pad: {p}" if p else ""
    extra += f" group: {group}" if group != 1 else ""
    extra += "" if bias else " bias_term: false"
    return (f'layer {{ name: "{name}" type: "Convolution" bottom: "{bottom}" top: "{top}"\n'
            f'  convolution_param {{ num_output: {n} kernel_size: {k}{extra}\n'
            f'    weight_filler {{ type: "msra" }} }} }}\n')


def relu(name, blob):
    return f'layer {{ name: "{name}" type: "ReLU" bottom: "{blob}" top: "{blob}" }}\n'


def pool(name, bottom, k, s, kind="MAX", top=None):
    return (f'layer {{ name: "{name}" type: "Pooling" bottom: "{bottom}" top: "{top or name}"\n'
            f'  pooling_param {{ pool: {kind} kernel_size: {k} stride: {s} }} }}\n')


def ip(name, bottom, n):
    return (f'layer {{ name: "{name}" type: "InnerProduct" bottom: "{bottom}" top: "{name}"\n'
            f'  inner_product_param {{ num_output: {n} weight_filler {{ type: "xavier" }} }} }}\n')


def dropout(name, blob):
    return (f'layer {{ name: "{name}" type: "Dropout" bottom: "{blob}" top: "{blob}"\n'
            f'  dropout_param {{ dropout_ratio: 0.5 }} }}\n')


def lrn(name, bottom):
    return (f'layer {{ name: "{name}" type: "LRN" bottom: "{bottom}" top: "{name}"\n'
            f'  lrn_param {{ local_size: 5 alpha: 0.0001 beta: 0.75 }} }}\n')


def bn_scale(name, blob):
    # in place, as the published ResNet prototxts do
    return (f'layer {{ name: "{name}_bn" type: "BatchNorm" bottom: "{blob}" top: "{blob}" }}\n'
            f'layer {{ name: "{name}_scale" type: "Scale" bottom: "{blob}" top: "{blob}"\n'
            f'  scale_param {{ bias_term: true }} }}\n')


def head(bottom, test):
    s = (f'layer {{ name: "loss" type: "SoftmaxWithLoss" bottom: "{bottom}" bottom: "label" '
         f'top: "loss" }}\n')
    if test:
        s += (f'layer {{ name: "accuracy" type: "Accuracy" bottom: "{bottom}" bottom: "label" '
              f'top: "accuracy"\n  include {{ phase: TEST }} }}\n')
    return s


def lenet(x, test):
    return (conv("conv1", x, 20, 5) + pool("pool1", "conv1", 2, 2) +
            conv("conv2", "pool1", 50, 5) + pool("pool2", "conv2", 2, 2) +
            ip("ip1", "pool2", 500) + relu("relu1", "ip1") + ip("ip2", "ip1", 4) + head("ip2", test))


def caffenet(x, test):
    return (conv("conv1", x, 96, 11, s=4) + relu("relu1", "conv1") +
            pool("pool1", "conv1", 3, 2) + lrn("norm1", "pool1") +
            conv("conv2", "norm1", 256, 5, p=2, group=2) + relu("relu2", "conv2") +
            pool("pool2", "conv2", 3, 2) + lrn("norm2", "pool2") +
            conv("conv3", "norm2", 384, 3, p=1) + relu("relu3", "conv3") +
            conv("conv4", "conv3", 384, 3, p=1, group=2) + relu("relu4", "conv4") +
            conv("conv5", "conv4", 256, 3, p=1, group=2) + relu("relu5", "conv5") +
            pool("pool5", "conv5", 3, 2) +
            ip("fc6", "pool5", 4096) + relu("relu6", "fc6") + dropout("drop6", "fc6") +
            ip("fc7", "fc6", 4096) + relu("relu7", "fc7") + dropout("drop7", "fc7") +
            ip("fc8", "fc7", 4) + head("fc8", test))


def vgg(x, test):
    # VGG-16's layout (2-2-3-3-3 3x3 convs, 2x2 max pools) at 1/4 of its widths (16..128 instead of
    # 64..512) and 512-wide fc layers, so that a few iterations at 227x227 run in well under a
    # minute on 2 CPU cores. The odd input size exercises Caffe's ceil rounding in pooling
    # (227 -> 114 -> 57 -> 29 -> 15 -> 8).
    s, bottom = "", x
    for stage, (n, reps) in enumerate([(16, 2), (32, 2), (64, 3), (128, 3), (128, 3)], 1):
        for r in range(1, reps + 1):
            name = f"conv{stage}_{r}"
            s += conv(name, bottom, n, 3, p=1) + relu(f"relu{stage}_{r}", name)
            bottom = name
        s += pool(f"pool{stage}", bottom, 2, 2)
        bottom = f"pool{stage}"
    return (s + ip("fc6", bottom, 512) + relu("relu6", "fc6") + dropout("drop6", "fc6") +
            ip("fc7", "fc6", 512) + relu("relu7", "fc7") + dropout("drop7", "fc7") +
            ip("fc8", "fc7", 4) + head("fc8", test))


def resnet(x, test):
    # CIFAR-style ResNet-14: a 3x3 stem, three stages of two basic blocks (16, 32, 64 channels,
    # stride 2 at the start of stages 2 and 3 with a 1x1 projection shortcut), BatchNorm + Scale
    # in place after every convolution, Eltwise SUM, global average pooling.
    s = conv("conv1", x, 16, 3, p=1, bias=False) + bn_scale("conv1", "conv1") + relu("conv1_relu", "conv1")
    bottom, width = "conv1", 16
    for stage, n in enumerate([16, 32, 64], 1):
        for b in (1, 2):
            name = f"res{stage}{'ab'[b - 1]}"
            stride = 2 if (stage > 1 and b == 1) else 1
            s += conv(f"{name}_1", bottom, n, 3, s=stride, p=1, bias=False)
            s += bn_scale(f"{name}_1", f"{name}_1") + relu(f"{name}_1_relu", f"{name}_1")
            s += conv(f"{name}_2", f"{name}_1", n, 3, p=1, bias=False)
            s += bn_scale(f"{name}_2", f"{name}_2")
            short = bottom
            if stride != 1 or n != width:
                short = f"{name}_proj"
                s += conv(short, bottom, n, 1, s=stride, bias=False) + bn_scale(short, short)
            s += (f'layer {{ name: "{name}" type: "Eltwise" bottom: "{short}" bottom: "{name}_2" '
                  f'top: "{name}"\n  eltwise_param {{ operation: SUM }} }}\n')
            s += relu(f"{name}_relu", name)
            bottom, width = name, n
    s += (f'layer {{ name: "gpool" type: "Pooling" bottom: "{bottom}" top: "gpool"\n'
          f'  pooling_param {{ pool: AVE global_pooling: true }} }}\n')
    return s + ip("fc", "gpool", 4) + head("fc", test)


# Stored size (LMDB/LibData sources), crop, TEST batch (None: no test net), solver, body.
NETS = {
    "lenet": (32, 28, 50, """type: "SGD"
base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: "fixed"
test_iter: 2 test_interval: 2 max_iter: 4""", lenet),
    "caffenet": (256, 227, None, """type: "Nesterov"
base_lr: 0.001 momentum: 0.9 weight_decay: 0.0005 lr_policy: "fixed"
max_iter: 3""", caffenet),
    "vgg": (256, 227, 4, """type: "Adam"
base_lr: 0.0001 momentum: 0.9 momentum2: 0.999 lr_policy: "fixed"
test_iter: 1 test_interval: 2 max_iter: 2""", vgg),
    "resnet": (32, 28, 32, """type: "RMSProp"
base_lr: 0.001 rms_decay: 0.98 weight_decay: 0.0001 lr_policy: "fixed"
test_iter: 2 test_interval: 2 max_iter: 4""", resnet),
}


def data_layer(variant, size, crop, phase, batch):
    train = phase == "TRAIN"
    split = "train" if train else "val"
    mirror = " mirror: true" if train else ""
    tp = f"transform_param {{ crop_size: {crop}{mirror} mean_value: 128 scale: {SCALE} }}"
    inc = f"include {{ phase: {phase} }}"
    if variant == "data":
        return (f'layer {{ name: "data" type: "Data" top: "data" top: "label" {inc}\n'
                f'  data_param {{ source: "{split}_{size}.lmdb" backend: LMDB batch_size: {batch} }}\n'
                f'  {tp} }}\n')
    if variant == "libdata":
        return (f'layer {{ name: "data" type: "LibData" top: "data" top: "label" {inc}\n'
                f'  data_param {{ source: "{split}_{size}.h5" batch_size: {batch} }}\n'
                f'  {tp} }}\n')
    src = f"{split}_{crop}_split.txt"
    if variant == "hdf5big" and train:
        src = f"big_{crop}.txt"
    shuffle = " shuffle: true" if train else ""
    return (f'layer {{ name: "data" type: "HDF5Data" top: "data" top: "label" {inc}\n'
            f'  hdf5_data_param {{ source: "{src}" batch_size: {batch}{shuffle} }} }}\n')


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "plan", "nets")
    for net, (size, crop, test_batch, solver, body) in NETS.items():
        os.makedirs(os.path.join(out, net), exist_ok=True)
        variants = ["data", "hdf5", "libdata"] + (["hdf5big"] if net == "caffenet" else [])
        for v in variants:
            s = (f"# {net}, {v} variant: written by scripts/plan_nets.py (issue 17 measurements);\n"
                 "# TRAIN_BATCH is replaced by scripts/plan_measure.sh.\n"
                 f'name: "{net}_{v}"\n')
            s += data_layer(v, size, crop, "TRAIN", "TRAIN_BATCH")
            if test_batch:
                s += data_layer(v, size, crop, "TEST", test_batch)
            x = "data"
            if v.startswith("hdf5"):
                s += (f'layer {{ name: "norm" type: "Power" bottom: "data" top: "data"\n'
                      f'  power_param {{ scale: {SCALE} shift: -0.5 }} }}\n')
            s += body(x, bool(test_batch))
            with open(os.path.join(out, net, f"{v}_train_val.prototxt"), "w") as f:
                f.write(s)
            with open(os.path.join(out, net, f"{v}_solver.prototxt"), "w") as f:
                f.write(f"# {net}, {v} variant: written by scripts/plan_nets.py\n"
                        f'net: "{v}_train_val.prototxt"\n{solver}\n'
                        "display: 1 snapshot_after_train: false solver_mode: CPU random_seed: 1\n")


if __name__ == "__main__":
    main()
