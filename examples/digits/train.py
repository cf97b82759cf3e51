#!/usr/bin/env python3
"""Train a tiny LeNet-like CNN on scikit-learn's 8x8 digits in pure NumPy and
export it to ONNX (opset 13, batch size 1) for the Zant microcontroller demo.

Usage:  python examples/digits/train.py

Outputs (next to this script):
  digits_cnn.onnx      the trained model: image [1,1,8,8] -> probabilities [1,10]
  digits_heldout.npz   held-out images (float32 N x 1 x 8 x 8, scaled to [0,1])
                       and labels (int64 N)

Architecture:
  Conv(8, 3x3, pad 1) -> Relu -> MaxPool 2x2/2
  -> Conv(16, 3x3, pad 1) -> Relu -> MaxPool 2x2/2
  -> Flatten -> Gemm(64->32) -> Relu -> Gemm(32->10) -> Softmax
"""
import os
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from sklearn.datasets import load_digits

SEED = 0
HELDOUT_FRACTION = 0.2
EPOCHS = 40
BATCH = 32
LR = 3e-3
HERE = os.path.dirname(os.path.abspath(__file__))
ONNX_PATH = os.path.join(HERE, "digits_cnn.onnx")
NPZ_PATH = os.path.join(HERE, "digits_heldout.npz")


# ----------------------------------------------------------------------------
# Layers (NCHW, float32)
# ----------------------------------------------------------------------------
def im2col(x, k=3, pad=1):
    """x: (N,C,H,W) -> cols (N, C*k*k, H*W) for stride 1, 'same' padding.
    Row order is (c, ky, kx), matching W.reshape(F, C*k*k)."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    cols = np.empty((n, c, k, k, h, w), dtype=x.dtype)
    for ky in range(k):
        for kx in range(k):
            cols[:, :, ky, kx] = xp[:, :, ky:ky + h, kx:kx + w]
    return cols.reshape(n, c * k * k, h * w)


def col2im(dcols, shape, k=3, pad=1):
    n, c, h, w = shape
    dcols = dcols.reshape(n, c, k, k, h, w)
    dxp = np.zeros((n, c, h + 2 * pad, w + 2 * pad), dtype=dcols.dtype)
    for ky in range(k):
        for kx in range(k):
            dxp[:, :, ky:ky + h, kx:kx + w] += dcols[:, :, ky, kx]
    return dxp[:, :, pad:pad + h, pad:pad + w]


def conv_forward(x, W, b):
    n, c, h, w = x.shape
    f = W.shape[0]
    cols = im2col(x)                                   # (N, CKK, HW)
    out = np.einsum("fk,nkp->nfp", W.reshape(f, -1), cols) + b[None, :, None]
    return out.reshape(n, f, h, w), (x.shape, cols)


def conv_backward(dout, W, cache):
    xshape, cols = cache
    n, f = dout.shape[:2]
    d = dout.reshape(n, f, -1)                         # (N, F, HW)
    dW = np.einsum("nfp,nkp->fk", d, cols).reshape(W.shape)
    db = d.sum(axis=(0, 2))
    dcols = np.einsum("fk,nfp->nkp", W.reshape(f, -1), d)
    return col2im(dcols, xshape), dW, db


def maxpool_forward(x):
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5)
    win = win.reshape(n, c, h // 2, w // 2, 4)
    idx = win.argmax(axis=-1)
    out = np.take_along_axis(win, idx[..., None], axis=-1)[..., 0]
    return out, (x.shape, idx)


def maxpool_backward(dout, cache):
    (n, c, h, w), idx = cache
    dwin = np.zeros((n, c, h // 2, w // 2, 4), dtype=dout.dtype)
    np.put_along_axis(dwin, idx[..., None], dout[..., None], axis=-1)
    dwin = dwin.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5)
    return dwin.reshape(n, c, h, w)


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------
def init_params(rng):
    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return {
        "conv1.weight": he((8, 1, 3, 3), 1 * 9),
        "conv1.bias": np.zeros(8, np.float32),
        "conv2.weight": he((16, 8, 3, 3), 8 * 9),
        "conv2.bias": np.zeros(16, np.float32),
        "fc1.weight": he((32, 64), 64),        # (out, in): Gemm transB=1
        "fc1.bias": np.zeros(32, np.float32),
        "fc2.weight": he((10, 32), 32),
        "fc2.bias": np.zeros(10, np.float32),
    }


def forward(p, x):
    c1, k1 = conv_forward(x, p["conv1.weight"], p["conv1.bias"])
    r1 = np.maximum(c1, 0)
    m1, kp1 = maxpool_forward(r1)
    c2, k2 = conv_forward(m1, p["conv2.weight"], p["conv2.bias"])
    r2 = np.maximum(c2, 0)
    m2, kp2 = maxpool_forward(r2)
    f = m2.reshape(m2.shape[0], -1)
    h = f @ p["fc1.weight"].T + p["fc1.bias"]
    rh = np.maximum(h, 0)
    logits = rh @ p["fc2.weight"].T + p["fc2.bias"]
    cache = (k1, c1, kp1, k2, c2, kp2, m2.shape, f, h, rh)
    return logits, cache


def backward(p, dlogits, cache):
    k1, c1, kp1, k2, c2, kp2, m2shape, f, h, rh = cache
    g = {}
    g["fc2.weight"] = dlogits.T @ rh
    g["fc2.bias"] = dlogits.sum(0)
    dh = (dlogits @ p["fc2.weight"]) * (h > 0)
    g["fc1.weight"] = dh.T @ f
    g["fc1.bias"] = dh.sum(0)
    df = (dh @ p["fc1.weight"]).reshape(m2shape)
    dr2 = maxpool_backward(df, kp2) * (c2 > 0)
    dm1, g["conv2.weight"], g["conv2.bias"] = conv_backward(dr2, p["conv2.weight"], k2)
    dr1 = maxpool_backward(dm1, kp1) * (c1 > 0)
    _, g["conv1.weight"], g["conv1.bias"] = conv_backward(dr1, p["conv1.weight"], k1)
    return g


def predict_proba(p, x, batch=256):
    return np.concatenate([softmax(forward(p, x[i:i + batch])[0])
                           for i in range(0, len(x), batch)])


# ----------------------------------------------------------------------------
# Data, training
# ----------------------------------------------------------------------------
def load_data():
    d = load_digits()
    x = (d.images.astype(np.float32) / 16.0)[:, None, :, :]   # (N,1,8,8) in [0,1]
    y = d.target.astype(np.int64)
    perm = np.random.default_rng(SEED).permutation(len(x))
    n_held = int(round(HELDOUT_FRACTION * len(x)))
    held, train = perm[:n_held], perm[n_held:]
    return x[train], y[train], x[held], y[held]


def train(xtr, ytr, xte, yte):
    rng = np.random.default_rng(SEED)
    p = init_params(rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(v) for k, v in p.items()}
    b1, b2, eps, t = 0.9, 0.999, 1e-8, 0
    n = len(xtr)
    for epoch in range(EPOCHS):
        lr = LR * 0.5 * (1 + np.cos(np.pi * epoch / EPOCHS))   # cosine decay
        order = rng.permutation(n)
        loss_sum = 0.0
        for i in range(0, n, BATCH):
            idx = order[i:i + BATCH]
            xb, yb = xtr[idx], ytr[idx]
            logits, cache = forward(p, xb)
            prob = softmax(logits)
            loss_sum += -np.log(prob[np.arange(len(yb)), yb] + 1e-12).sum()
            dlogits = prob
            dlogits[np.arange(len(yb)), yb] -= 1
            dlogits /= len(yb)
            g = backward(p, dlogits.astype(np.float32), cache)
            t += 1
            for k in p:
                m[k] = b1 * m[k] + (1 - b1) * g[k]
                v[k] = b2 * v[k] + (1 - b2) * g[k] * g[k]
                mh = m[k] / (1 - b1 ** t)
                vh = v[k] / (1 - b2 ** t)
                p[k] = (p[k] - lr * mh / (np.sqrt(vh) + eps)).astype(np.float32)
        if epoch % 5 == 4 or epoch == EPOCHS - 1:
            tr_acc = (predict_proba(p, xtr).argmax(1) == ytr).mean()
            te_acc = (predict_proba(p, xte).argmax(1) == yte).mean()
            print(f"epoch {epoch + 1:3d}  loss {loss_sum / n:.4f}  "
                  f"train {tr_acc:.4f}  held-out {te_acc:.4f}")
    return p


def gradient_check(rng):
    """Finite-difference check of the backward pass (float64, tiny batch)."""
    p = {k: v.astype(np.float64) for k, v in init_params(rng).items()}
    for k in p:
        if k.endswith("bias"):
            p[k] = rng.standard_normal(p[k].shape) * 0.1
    x = rng.random((3, 1, 8, 8))
    y = np.array([1, 4, 7])

    def loss(pp):
        pr = softmax(forward(pp, x)[0])
        return -np.log(pr[np.arange(3), y]).sum() / 3

    logits, cache = forward(p, x)
    d = softmax(logits)
    d[np.arange(3), y] -= 1
    g = backward(p, d / 3, cache)
    worst = 0.0
    for k in p:
        for _ in range(5):
            j = tuple(rng.integers(s) for s in p[k].shape)
            old = p[k][j]
            p[k][j] = old + 1e-5; lp = loss(p)
            p[k][j] = old - 1e-5; lm = loss(p)
            p[k][j] = old
            num = (lp - lm) / 2e-5
            worst = max(worst, abs(num - g[k][j]) / max(1e-6, abs(num) + abs(g[k][j])))
    assert worst < 1e-4, f"gradient check failed: rel err {worst}"
    print(f"gradient check ok (max rel err {worst:.2e})")


# ----------------------------------------------------------------------------
# ONNX export
# ----------------------------------------------------------------------------
def export_onnx(p, path):
    inits = [numpy_helper.from_array(v.astype(np.float32), name=k) for k, v in p.items()]
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["conv1_out"], name="conv1", **conv),
        helper.make_node("Relu", ["conv1_out"], ["relu1_out"], name="relu1"),
        helper.make_node("MaxPool", ["relu1_out"], ["pool1_out"], name="pool1", **pool),
        helper.make_node("Conv", ["pool1_out", "conv2.weight", "conv2.bias"], ["conv2_out"], name="conv2", **conv),
        helper.make_node("Relu", ["conv2_out"], ["relu2_out"], name="relu2"),
        helper.make_node("MaxPool", ["relu2_out"], ["pool2_out"], name="pool2", **pool),
        helper.make_node("Flatten", ["pool2_out"], ["flatten_out"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flatten_out", "fc1.weight", "fc1.bias"], ["fc1_out"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1_out"], ["relu3_out"], name="relu3"),
        helper.make_node("Gemm", ["relu3_out", "fc2.weight", "fc2.bias"], ["logits"], name="fc2", transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
        initializer=inits,
    )
    model = helper.make_model(graph, producer_name="zant-examples-digits",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8   # IR v8 pairs with opset 13; readable by older runtimes
    model.doc_string = ("LeNet-like CNN for sklearn 8x8 digits. Input: pixel values / 16 "
                        "(range [0,1]), NCHW [1,1,8,8]. Output: class probabilities [1,10].")
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)
    return model


def main():
    t0 = time.time()
    gradient_check(np.random.default_rng(1))
    xtr, ytr, xte, yte = load_data()
    print(f"train {len(xtr)}  held-out {len(xte)}")
    p = train(xtr, ytr, xte, yte)
    t_train = time.time() - t0
    print(f"training time {t_train:.1f} s")

    np_pred = predict_proba(p, xte).argmax(1)
    np_acc = (np_pred == yte).mean()
    print(f"NumPy model held-out accuracy: {np_acc:.4f} ({(np_pred == yte).sum()}/{len(yte)})")

    export_onnx(p, ONNX_PATH)
    np.savez_compressed(NPZ_PATH, images=xte.astype(np.float32), labels=yte.astype(np.int64))

    # --- verify the exported file ---
    model = onnx.load(ONNX_PATH)
    onnx.checker.check_model(model, full_check=True)
    sess = ReferenceEvaluator(model)
    held = np.load(NPZ_PATH)
    images, labels = held["images"], held["labels"]
    assert images.dtype == np.float32 and images.shape == (len(yte), 1, 8, 8)
    assert labels.dtype == np.int64 and labels.shape == (len(yte),)
    ref_prob = np.concatenate([sess.run(None, {"image": images[i:i + 1]})[0]
                               for i in range(len(images))])
    ref_pred = ref_prob.argmax(1)
    np_prob = predict_proba(p, images)
    max_diff = np.abs(ref_prob - np_prob).max()
    assert np.array_equal(ref_pred, np_pred), "ReferenceEvaluator disagrees with NumPy model"
    assert max_diff < 1e-4, f"probabilities differ by {max_diff}"
    ref_acc = (ref_pred == labels).mean()
    print(f"ONNX ReferenceEvaluator held-out accuracy: {ref_acc:.4f} "
          f"({(ref_pred == labels).sum()}/{len(labels)}); max |prob diff| vs NumPy {max_diff:.2e}")
    print(f"wrote {ONNX_PATH} ({os.path.getsize(ONNX_PATH)} bytes)")
    print(f"wrote {NPZ_PATH} ({os.path.getsize(NPZ_PATH)} bytes)")
    print(f"total time {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
