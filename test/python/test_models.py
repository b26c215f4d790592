"""Issue 12's acceptance models on Kiln's eager, aot_eager and cpu backends
(and cpu with options={"freezing": True}) against eager PyTorch by the same() rule (allclose, else RMSE against an
fp64 reference no worse than twice eager's): torchvision resnet18,
resnet50, mobilenet_v2 (eval, seeded BatchNorm statistics, batch 2,
3x64x64), nn.TransformerEncoderLayer (batch_first, dropout 0) and a GPT-2
block (pre-norm, causal mask from a buffer, GELU tanh); then recompiles of
the models (automatic dynamic batch, mark_dynamic, specialized sequence
lengths)."""

import pytest
import torch

import kiln
from models import (fp64_reference, gpt2_block, same, torchvision_model,
                    transformer_layer)

BACKENDS = ["eager", "aot_eager", "cpu"]

MODELS = {
    "resnet18": (lambda: torchvision_model("resnet18"), (2, 3, 64, 64)),
    "resnet50": (lambda: torchvision_model("resnet50"), (2, 3, 64, 64)),
    "mobilenet_v2": (lambda: torchvision_model("mobilenet_v2"),
                     (2, 3, 64, 64)),
    "transformer_layer": (transformer_layer, (2, 16, 32)),
    "gpt2_block": (gpt2_block, (2, 16, 32)),
}

_models = {}


def model_and_input(name):
    if name not in _models:
        make, shape = MODELS[name]
        model = make()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            expected = model(x)
        _models[name] = (model, x, expected, fp64_reference(model, x))
    return _models[name]


@pytest.mark.parametrize("backend", BACKENDS + ["cpu-freezing"])
@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_eager(name, backend):
    model, x, expected, ref64 = model_and_input(name)
    # cpu-freezing: options={"freezing": True} (parameters constant:
    # BatchNorm folded and weights packed once; test_freezing.py).
    opt = kiln.compile(model, backend=backend.split("-")[0],
                       options={"freezing": True}
                       if backend.endswith("freezing") else None)
    with torch.no_grad():
        out = opt(x)
        ok, how = same(out, expected, ref64)
        assert ok, "%s on %s: %s" % (name, backend, how)
        # A second call hits the cache and gives the same values.
        again = opt(x)
    torch.testing.assert_close(again, out, rtol=0, atol=0)
    (prog,) = opt._kiln.programs.values()
    stats = prog.stats()
    assert (stats["compiles"], stats["hits"]) == (1, 1)
    # Results are Kiln's buffers.
    assert again.data_ptr() == prog.session.last_result_pointers[0]


def test_resnet18_batch_recompiles_once_then_dynamic():
    model, _, _, _ = model_and_input("resnet18")
    opt = kiln.compile(model, backend="eager")
    with torch.no_grad():
        for n in (2, 4, 3, 1):
            x = torch.randn(n, 3, 32, 32)
            ok, how = same(opt(x), model(x), None)
            assert ok, how
    (prog,) = opt._kiln.programs.values()
    assert prog.stats()["compiles"] == 2
    assert prog.recompile_reasons() == [
        "tensor 'x' size mismatch at index 0. expected 2, actual 4"]
    assert "tensor<?x3x32x32xf32>" in prog.session.entry_ir(prog.name, 1)


def test_resnet18_mark_dynamic_batch():
    model, _, _, _ = model_and_input("resnet18")
    opt = kiln.compile(model, backend="eager")
    with torch.no_grad():
        for n in (2, 5):
            x = torch.randn(n, 3, 32, 32)
            kiln.mark_dynamic(x, 0)
            ok, how = same(opt(x), model(x), None)
            assert ok, how
    (prog,) = opt._kiln.programs.values()
    assert prog.stats()["compiles"] == 1


def test_gpt2_sequence_length_is_dynamic():
    # The causal mask is sliced by the sequence length, a dynamic kt.slice
    # bound (it was specialized, each new length captured again): the
    # runtime's automatic dynamic shapes makes the length and then the
    # batch `?`, one recompile each.
    model, _, _, _ = model_and_input("gpt2_block")
    opt = kiln.compile(model, backend="eager")
    with torch.no_grad():
        for b, t in ((2, 8), (2, 12), (3, 12), (5, 12)):
            x = torch.randn(b, t, 32)
            ok, how = same(opt(x), model(x), None)
            assert ok, how
    (prog,) = opt._kiln.programs.values()
    assert prog.stats()["compiles"] == 3
    assert prog.recompile_reasons()[:2] == [
        "tensor 'x' size mismatch at index 1. expected 8, actual 12",
        "tensor 'x' size mismatch at index 0. expected 2, actual 3"]
    assert "tensor<?x?x32xf32>" in prog.session.entry_ir(prog.name, 2)
    with torch.no_grad():
        x = torch.randn(4, 5, 32)
        ok, how = same(opt(x), model(x), None)
        assert ok, how
    assert prog.stats()["compiles"] == 3


def test_transformer_layer_on_cpu_with_dynamic_batch():
    model, _, _, _ = model_and_input("transformer_layer")
    opt = kiln.compile(model, backend="cpu")
    with torch.no_grad():
        for b in (2, 3, 4):
            x = torch.randn(b, 16, 32)
            ok, how = same(opt(x), model(x), None)
            assert ok, how
    (prog,) = opt._kiln.programs.values()
    assert prog.stats()["compiles"] == 2
