#!/usr/bin/env python3
"""Rewrite the PP-OCRv4 detection model (or, the same way, PP-OCRv4 recognition) into an equivalent, faster graph.

Run by scripts/fetch_native.py (never at build time), with the pinned `onnx` package it
installs into the native cache. Usage: fuse_ppocr.py SRC.onnx DST.onnx

Why: both models are PP-LCNetV3 networks exported from Paddle, where every convolution is
followed by about eight element-wise passes that ONNX Runtime does not fuse:

    Conv -> Mul(a) -> Add(b)                      (learnable affine, before the activation)
         -> Add(3) -> Clip(0, 6) -> Mul(x) -> Div(6)   (hard-swish, spelled out)
         -> Mul(c) -> Add(d) -> next Conv         (learnable affine, after the activation)

On a 1,800 px text line these passes took more time than the convolutions. The rewrite is
exact algebra (outputs agree to ~1e-6; src/ocr/ppocr/models.rs has a test comparing both):

1. `a * conv(x) + b` is a convolution with weights `a*W` and bias `a*B + b`.
2. `x * clip(x + 3, 0, 6) / 6` is the ONNX `HardSwish` operator (opset 14), one pass, which
   ONNX Runtime fuses into the preceding convolution.
3. `conv(c*y + d)` for an unpadded convolution is a convolution of `y` with weights `c*W`
   and bias `B + d * sum(W)`. Padded convolutions are left alone: their zero padding would
   no longer be zero after the affine, so folding them would change border pixels.
4. The affines left (before a padded depthwise convolution, or a pooling) become a 1x1
   depthwise convolution with weight `c` and bias `d` per channel: the same `c*y + d`, in
   one pass instead of two, and, being a convolution, ONNX Runtime keeps it in its blocked
   (NCHWc) layout. As `Mul` and `Add`, each one cost a reorder out of that layout and back
   in around the two passes: 25 % of a text line's recognition time.
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, version_converter


def fuse(model):
    model = version_converter.convert_version(model, 14)
    g = model.graph
    consts = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    nodes = []
    for n in g.node:
        if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        else:
            nodes.append(n)

    def consumers(name):
        return [n for n in nodes if name in n.input]

    def only_consumer(name, op):
        cs = consumers(name)
        return cs[0] if len(cs) == 1 and cs[0].op_type == op else None

    def scalar(name):
        a = consts.get(name)
        return float(a.reshape(-1)[0]) if a is not None and a.size == 1 else None

    def scalar_operand(node, other_than):
        """The scalar constant operand of a binary node whose other operand is `other_than`."""
        rest = [i for i in node.input if i != other_than]
        return scalar(rest[0]) if len(node.input) == 2 and len(rest) == 1 else None

    def attr(node, name, default):
        for a in node.attribute:
            if a.name == name:
                return helper.get_attribute_value(a)
        return default

    def rewire(old, new):
        for n in nodes:
            for k, x in enumerate(n.input):
                if x == old:
                    n.input[k] = new

    def set_conv(conv, weight, bias, tag):
        consts[conv.input[1] + tag] = weight.astype(np.float32)
        consts[conv.output[0] + "_bias" + tag] = bias.astype(np.float32)
        conv.input[1] = conv.input[1] + tag
        if len(conv.input) > 2:
            conv.input[2] = conv.output[0] + "_bias" + tag
        else:
            conv.input.append(conv.output[0] + "_bias" + tag)

    def conv_params(conv):
        w = consts[conv.input[1]]
        b = consts[conv.input[2]] if len(conv.input) > 2 else np.zeros(w.shape[0], np.float32)
        return w, b

    counts = {"affine_into_conv": 0, "hardswish": 0, "affine_into_next_conv": 0, "affine_as_depthwise": 0}

    # 1. Conv -> Mul(a) -> Add(b)
    for conv in list(nodes):
        if conv.op_type != "Conv" or len(conv.input) < 2 or conv.input[1] not in consts:
            continue
        mul = only_consumer(conv.output[0], "Mul")
        a = scalar_operand(mul, conv.output[0]) if mul else None
        add = only_consumer(mul.output[0], "Add") if a is not None else None
        b = scalar_operand(add, mul.output[0]) if add else None
        if b is None:
            continue
        w, bias = conv_params(conv)
        set_conv(conv, w * a, bias * a + b, "_pre")
        nodes.remove(mul)
        nodes.remove(add)
        rewire(add.output[0], conv.output[0])
        counts["affine_into_conv"] += 1

    # 2. x -> Add(3) -> Clip(0, 6); Mul(x, clip) -> Div(6)  =>  HardSwish(x)
    for add in list(nodes):
        if add.op_type != "Add" or len(add.input) != 2:
            continue
        xs = [i for i in add.input if scalar(i) != 3.0]
        if len(xs) != 1:
            continue
        x = xs[0]
        clip = only_consumer(add.output[0], "Clip")
        if not clip or len(clip.input) != 3 or scalar(clip.input[1]) != 0.0 or scalar(clip.input[2]) != 6.0:
            continue
        mul = only_consumer(clip.output[0], "Mul")
        if not mul or x not in mul.input:
            continue
        div = only_consumer(mul.output[0], "Div")
        if not div or div.input[0] != mul.output[0] or scalar(div.input[1]) != 6.0:
            continue
        at = nodes.index(add)
        for n in (add, clip, mul, div):
            nodes.remove(n)
        nodes.insert(at, helper.make_node("HardSwish", [x], [div.output[0]], name=div.output[0]))
        counts["hardswish"] += 1

    # 3. y -> Mul(c) -> Add(d) -> Conv without padding
    for mul in list(nodes):
        if mul.op_type != "Mul" or mul not in nodes or len(mul.input) != 2:
            continue
        ys = [i for i in mul.input if scalar(i) is None]
        if len(ys) != 1:
            continue
        y = ys[0]
        c = scalar_operand(mul, y)
        add = only_consumer(mul.output[0], "Add")
        d = scalar_operand(add, mul.output[0]) if add else None
        conv = only_consumer(add.output[0], "Conv") if d is not None else None
        if not conv or conv.input[0] != add.output[0] or conv.input[1] not in consts:
            continue
        if any(attr(conv, "pads", [0, 0, 0, 0])) or attr(conv, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            continue
        w, bias = conv_params(conv)
        set_conv(conv, w * c, bias + d * w.reshape(w.shape[0], -1).sum(axis=1), "_post")
        conv.input[0] = y
        nodes.remove(mul)
        nodes.remove(add)
        counts["affine_into_next_conv"] += 1

    # 4. HardSwish(Conv) -> Mul(c) -> Add(d), anything else  =>  1x1 depthwise Conv(c, d)
    producer = {o: n for n in nodes for o in n.output}
    for mul in list(nodes):
        if mul.op_type != "Mul" or len(mul.input) != 2:
            continue
        ys = [i for i in mul.input if scalar(i) is None]
        if len(ys) != 1:
            continue
        y = ys[0]
        act = producer.get(y)
        conv = producer.get(act.input[0]) if act is not None and act.op_type == "HardSwish" else None
        if conv is None or conv.op_type != "Conv" or conv.input[1] not in consts:
            continue
        c = scalar_operand(mul, y)
        add = only_consumer(mul.output[0], "Add")
        d = scalar_operand(add, mul.output[0]) if add else None
        if d is None:
            continue
        channels = consts[conv.input[1]].shape[0]
        name = add.output[0] + "_affine"
        consts[name + "_w"] = np.full((channels, 1, 1, 1), c, np.float32)
        consts[name + "_b"] = np.full((channels,), d, np.float32)
        at = nodes.index(mul)
        nodes.remove(mul)
        nodes.remove(add)
        nodes.insert(
            at,
            helper.make_node(
                "Conv", [y, name + "_w", name + "_b"], [add.output[0]], name=name,
                group=channels, kernel_shape=[1, 1], pads=[0, 0, 0, 0], strides=[1, 1],
            ),
        )
        counts["affine_as_depthwise"] += 1

    used = {i for n in nodes for i in n.input}
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in consts.items() if k in used)
    onnx.checker.check_model(model)
    return model, counts


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: fuse_ppocr.py SRC.onnx DST.onnx")
    src, dst = sys.argv[1], sys.argv[2]
    model, counts = fuse(onnx.load(src))
    if counts["affine_into_conv"] == 0 or counts["hardswish"] == 0:
        sys.exit(f"{src}: none of the expected patterns found ({counts}); not a PP-LCNetV3 export?")
    onnx.save(model, dst)
    print(f"fused {src} -> {dst}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
