"""kiln.compile and the torch.compile-style API: OptimizedModule, backends,
config, errors, results without copies, recompiles (automatic dynamic
shapes, mark_dynamic / mark_static, cache_size_limit), the FX backend entry
point. References are eager PyTorch."""

import inspect
import re
import warnings

import pytest
import torch
import torch.fx as fx
import torch.nn as nn

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


@pytest.fixture(autouse=True)
def fresh_config():
    saved = {k: getattr(kiln.config, k) for k in kiln.config.__slots__}
    yield
    for k, v in saved.items():
        setattr(kiln.config, k, v)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("offset", torch.arange(3.0))
        self.label = "scaled"

    def forward(self, x, scale=1.0, bias=None):
        y = self.fc(x) * scale + self.offset
        if bias is not None:
            y = y + bias
        return {"y": y, "sum": y.sum(-1)}


def only(compiled):
    """The one captured program of a compiled function or module."""
    programs = list(compiled._kiln.programs.values())
    assert len(programs) == 1, [p.name for p in programs]
    return programs[0]


def test_list_backends():
    assert kiln.list_backends() == ["aot_eager", "cpu", "eager"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_optimized_module_keeps_the_module_api(backend):
    torch.manual_seed(0)
    m = Scaled().eval()
    opt = kiln.compile(m, backend=backend)
    assert isinstance(opt, kiln.OptimizedModule)
    assert isinstance(opt, nn.Module)
    assert opt._orig_mod is m
    # state_dict, parameters, buffers: the module's own (same keys, same
    # tensors).
    assert list(opt.state_dict()) == list(m.state_dict())
    assert all(a is b for a, b in zip(opt.parameters(), m.parameters()))
    assert dict(opt.named_buffers())["offset"] is m.offset
    # Attribute access and assignment reach the module.
    assert opt.fc is m.fc and opt.label == "scaled"
    opt.label = "renamed"
    assert m.label == "renamed"
    opt.train()
    assert m.training and opt.training
    opt.eval()
    assert not m.training
    # Calls with positional and keyword arguments, a dict output.
    x, bias = torch.randn(2, 4), torch.randn(3)
    with torch.no_grad():
        for args, kwargs in [((x,), {}), ((x, 2.0), {}),
                             ((x,), {"scale": 0.5, "bias": bias}),
                             ((), {"x": x, "bias": bias})]:
            out = opt(*args, **kwargs)
            ref = m(*args, **kwargs)
            assert set(out) == {"y", "sum"}
            torch.testing.assert_close(out["y"], ref["y"])
            torch.testing.assert_close(out["sum"], ref["sum"])
        # Non-tensor arguments are specialized: each value (and the bias
        # being None or a tensor) is a program of its own: (1.0, None),
        # (2.0, None), (0.5, tensor), (1.0, tensor).
        assert len(opt._kiln.programs) == 4
        assert opt.forward(x)["y"].shape == (2, 3)
    # load_state_dict goes to the module, and calls see the new values.
    sd = {k: torch.zeros_like(v) for k, v in m.state_dict().items()}
    opt.load_state_dict(sd)
    with torch.no_grad():
        assert torch.count_nonzero(opt(x)["y"]) == 0


def test_compile_functions_and_decorators():
    def f(a, b):
        return torch.relu(a) * b

    a, b = torch.randn(5), torch.randn(5)
    for compiled in (kiln.compile(f, backend="eager"),
                     kiln.compile(backend="aot_eager")(f),
                     kiln.optimize("eager")(f)):
        assert isinstance(compiled, kiln.CompiledFunction)
        assert compiled.__name__ == "f"
        torch.testing.assert_close(compiled(a, b), f(a, b))

    @kiln.optimize("cpu")
    def g(x):
        return x.sum(0) + 1

    x = torch.randn(3, 4)
    torch.testing.assert_close(g(x), x.sum(0) + 1)
    assert kiln.compile(f, disable=True) is f


def test_bad_arguments():
    f = lambda x: x  # noqa: E731
    with pytest.raises(kiln.KilnError, match="unknown backend 'inductor'"):
        kiln.compile(f, backend="inductor")
    with pytest.raises(kiln.KilnError, match="unknown mode 'fast'"):
        kiln.compile(f, mode="fast")
    with pytest.raises(kiln.KilnError, match="unknown option 'threads'"):
        kiln.compile(f, options={"threads": 2})
    kiln.compile(f, mode="max-autotune")  # accepted
    # A builtin has no signature: a clear error naming the way around it.
    with pytest.raises(kiln.KilnError, match="no Python signature.*lambda x: asin"):
        kiln.compile(torch.asin)
    with pytest.raises(ValueError, match="positive int"):
        kiln.config.cache_size_limit = 0
    with pytest.raises(AttributeError, match="no setting 'nope'"):
        kiln.config.nope = 1


def test_options_set_the_pipeline():
    def f(x):
        return torch.exp(x) * 2

    compiled = kiln.compile(f, backend="eager",
                            options={"pipeline": "kiln-aot-eager"})
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), f(x))
    prog = only(compiled)
    assert prog.session.get_option("pipeline") == "kiln-aot-eager"
    assert "kiln-functionalize" in prog.session.compile_phases(prog.name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_are_kilns_buffers(backend):
    def f(x):
        return x * 2, (x > 0)

    compiled = kiln.compile(f, backend=backend)
    x = torch.randn(6)
    y, m = compiled(x)
    prog = only(compiled)
    # The tensors own the buffers the C API reported (no copy).
    assert [y.data_ptr(), m.data_ptr()] == prog.session.last_result_pointers
    torch.testing.assert_close(y, x * 2)
    assert m.dtype == torch.bool and torch.equal(m, x > 0)


def test_kiln_errors_carry_the_users_location():
    def f(x, i):
        return torch.index_select(x * 2, 0, i)  # LINE

    src, first = inspect.getsourcelines(f)
    (k,) = [k for k, l in enumerate(src) if "# LINE" in l]
    where = "%s:%d:%d" % (__file__, first + k,
                          src[k].index("torch.index_select") + 1)
    for backend in BACKENDS:
        compiled = kiln.compile(f, backend=backend)
        with pytest.raises(kiln.KilnError) as info:
            compiled(torch.randn(3, 2), torch.tensor([0, 5]))
        assert info.value.location == where, str(info.value)
        assert "index 5 is out of range for dim 0 with size 3" in str(
            info.value)


def uncapturable(x):
    # Python code that needs a real tensor where the tracer has a proxy:
    # not a graph break, the capture fails. (`isinstance` answers as for a
    # tensor while tracing; `type(x)` is the Proxy's class.)
    if type(x) is not torch.Tensor:
        raise TypeError("expected a tensor")
    return x + 1


def test_unsupported_raises_or_runs_eagerly_with_suppress_errors():
    x = torch.randn(5)
    compiled = kiln.compile(uncapturable, backend="eager")
    with pytest.raises(kiln.Unsupported, match="expected a tensor"):
        compiled(x)
    kiln.config.suppress_errors = True
    with pytest.warns(kiln.KilnWarning, match="runs eagerly: .*expected a "
                      "tensor"):
        out = compiled(x)
    torch.testing.assert_close(out, uncapturable(x))
    # Once failed, the function runs eagerly without trying again.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.testing.assert_close(compiled(x), uncapturable(x))
    # fullgraph=True raises even with suppress_errors (here at a graph
    # break, which without fullgraph is not an error).
    strict = kiln.compile(lambda t: torch.fix(t), backend="eager",
                          fullgraph=True)
    with pytest.raises(kiln.Unsupported, match="torch.fix"):
        strict(x)


def test_reset_recompiles():
    calls = []

    def f(x):
        calls.append(1)  # runs at trace time only
        return x + 1

    compiled = kiln.compile(f, backend="eager")
    x = torch.randn(3)
    compiled(x)
    compiled(x)
    assert len(calls) == 1
    kiln.reset()
    torch.testing.assert_close(compiled(x), x + 1)
    assert len(calls) == 2
    assert only(compiled).stats()["compiles"] == 1


def test_grad_enabled_with_parameters_tracks_gradients():
    # Parameters that require grad: the graph runs as an autograd Function
    # (test_training.py covers training), without warnings.
    m = nn.Linear(3, 2)
    opt = kiln.compile(m, backend="eager")
    x = torch.randn(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = opt(x)
    assert out.requires_grad
    with torch.no_grad():
        torch.testing.assert_close(out, m(x))


def test_verbose_reports_captures(capsys):
    kiln.config.verbose = True
    compiled = kiln.compile(lambda x: x * 3, backend="eager")
    compiled(torch.randn(2))
    compiled(torch.randn(2, 2))
    err = capsys.readouterr().err
    assert "kiln: captured @" in err
    assert "kiln: recompiling @" in err
    assert "rank mismatch" in err


# ------------------------------------------------------------ recompiles


def body(x):
    return x * 2 + x.sum(0)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_changed_shape_recompiles_once_then_dynamic(backend):
    compiled = kiln.compile(body, backend=backend)
    for n in (4, 8, 16, 5):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), body(x))
    prog = only(compiled)
    stats = prog.stats()
    assert (stats["compiles"], stats["hits"], stats["misses"]) == (2, 2, 2)
    assert prog.recompile_reasons() == [
        "tensor 'x' size mismatch at index 0. expected 4, actual 8"]
    assert "tensor<?x3xf32>" in prog.session.entry_ir(prog.name, 1)


def test_mark_dynamic_avoids_the_first_recompile():
    compiled = kiln.compile(body, backend="eager")
    x = torch.randn(4, 3)
    kiln.mark_dynamic(x, 0)
    compiled(x)
    y = torch.randn(8, 3)
    torch.testing.assert_close(compiled(y), body(y))
    prog = only(compiled)
    assert prog.stats()["compiles"] == 1
    assert prog.recompile_reasons() == []
    assert "tensor<?x3xf32>" in prog.session.entry_ir(prog.name, 0)


def test_mark_static_recompiles_every_size():
    compiled = kiln.compile(body, backend="eager")
    sizes = (4, 8, 16)
    for n in sizes:
        x = torch.randn(n, 3)
        kiln.mark_static(x, 0)
        torch.testing.assert_close(compiled(x), body(x))
    prog = only(compiled)
    assert prog.stats()["compiles"] == 3
    assert prog.recompile_reasons() == [
        "tensor 'x' size mismatch at index 0. expected 4, actual 8",
        "tensor 'x' size mismatch at index 0. expected 8, actual 16"]


@pytest.mark.parametrize("dynamic,compiles", [(False, 3), (True, 1)])
def test_dynamic_flag(dynamic, compiles):
    compiled = kiln.compile(body, backend="eager", dynamic=dynamic)
    for n in (4, 8, 16):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), body(x))
    assert only(compiled).stats()["compiles"] == compiles


def test_automatic_dynamic_shapes_off_in_config():
    kiln.config.automatic_dynamic_shapes = False
    compiled = kiln.compile(body, backend="eager")
    for n in (4, 8, 16):
        compiled(torch.randn(n, 3))
    assert only(compiled).stats()["compiles"] == 3


def test_mark_dynamic_on_a_specialized_dim_raises():
    def f(x):
        return x[:, :2] * x.size(1)

    x = torch.randn(3, 5)
    kiln.mark_dynamic(x, 1)
    with pytest.raises(kiln.SpecializationError,
                       match="dim 1 of input 0 was marked dynamic"):
        kiln.compile(f, backend="eager")(x)


def test_specialized_dims_recompile_and_recapture():
    # The size of dim 1 used as a tensor value: the capture specializes it,
    # so the runtime keeps it static and every new size is captured again.
    # (A slice bound such as x[:, :x.size(1) - 1] no longer specializes:
    # kt.slice takes it as a dynamic bound, test_dynamic_slice.py.)
    def f(x):
        return x * (x.size(1) - 1)

    compiled = kiln.compile(f, backend="eager")
    for n in (4, 6, 6, 9):
        x = torch.randn(2, n)
        torch.testing.assert_close(compiled(x), f(x))
    prog = only(compiled)
    assert prog.stats()["compiles"] == 3
    for i in range(3):
        assert "tensor<2x" in prog.session.entry_ir(prog.name, i)


def test_cache_size_limit_falls_back_to_eager_with_a_warning():
    kiln.config.cache_size_limit = 2
    compiled = kiln.compile(body, backend="eager", dynamic=False)
    compiled(torch.randn(2, 3))
    compiled(torch.randn(3, 3))
    x = torch.randn(4, 3)
    with pytest.warns(kiln.KilnWarning) as record:
        out = compiled(x)
    torch.testing.assert_close(out, body(x))
    (w,) = record
    message = str(w.message)
    assert re.search(r"body \(.*test_compile.py:\d+\) reached "
                     r"cache_size_limit \(2\); it will not be recompiled and "
                     r"runs eagerly \(PyTorch\) from now on", message)
    assert message.endswith(
        "Recompile reasons:\n"
        "  1. tensor 'x' size mismatch at index 0. expected 2, actual 3\n"
        "  2. tensor 'x' size mismatch at index 0. expected 3, actual 4")
    # Warned once; later misses run eagerly too, hits stay compiled.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = torch.randn(5, 3)
        torch.testing.assert_close(compiled(y), body(y))
        compiled(torch.randn(2, 3))
    stats = only(compiled).stats()
    assert stats["compiles"] == 2
    assert stats["hits"] == 1


# ------------------------------------------------------- the FX backend


@pytest.mark.parametrize("backend", BACKENDS)
def test_fx_backend_entry_point(backend):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
    gm = fx.symbolic_trace(net)
    x = torch.randn(3, 4)
    fn = kiln.backend(gm, [x], backend=backend)
    with torch.no_grad():
        torch.testing.assert_close(fn(x), net(x))
        # A new batch size: recompiled (re-imported) through the same
        # callable, then dynamic.
        for n in (5, 7):
            y = torch.randn(n, 4)
            torch.testing.assert_close(fn(y), net(y))
    stats = fn.program.stats()
    assert stats["compiles"] == 2


def test_fx_backend_graph_with_tuple_output():
    def f(a, b):
        return (a + b, a * b)

    gm = fx.symbolic_trace(f)
    a, b = torch.randn(3), torch.randn(3)
    out = kiln.backend(gm, [a, b], backend="eager")(a, b)
    assert isinstance(out, tuple) and len(out) == 2
    torch.testing.assert_close(out[0], a + b)
    torch.testing.assert_close(out[1], a * b)


def test_fx_backend_refuses_other_objects():
    with pytest.raises(TypeError, match="GraphModule"):
        kiln.backend(nn.Linear(2, 2), [torch.randn(2)])


def test_a_recapture_that_specializes_a_new_dim_keeps_it_static():
    # First capture: x and y both of size 3 (nothing specialized). Then x
    # has size 1: the runtime would make its dim dynamic (it changed), but
    # the new capture broadcasts it as size 1 and marks it static from the
    # on-miss callback, so the new entry takes x as tensor<1xf32>.
    def f(x, y):
        return x + y

    compiled = kiln.compile(f, backend="eager")
    y = torch.randn(3)
    for n in (3, 1):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x, y), x + y)
    prog = only(compiled)
    assert prog.stats()["compiles"] == 2
    assert "%x: tensor<1xf32>" in prog.session.entry_ir(prog.name, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_are_mapped_by_the_entry_that_ran(backend):
    # x.float() is x itself for an f32 input (the output is the argument)
    # and a cast for an f64 input (a program result); z is a result either
    # way. Alternating calls hit the older cache entry: its own output
    # layout must map the results, not the latest capture's.
    def f(x):
        return x.float(), x * 2

    g = kiln.compile(f, backend=backend)
    a32 = torch.randn(3)
    a64 = torch.randn(3, dtype=torch.float64)
    for x in (a32, a64, a32, a64):
        got = g(x)
        want = f(x)
        for u, v in zip(got, want):
            assert u.dtype == v.dtype
            assert torch.equal(u, v)
        assert got[0] is x if x.dtype == torch.float32 else True


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_in_place_writes_to_arguments_on_every_backend(backend):
    # A graph that writes its arguments (!kt.ref) runs on the cpu backend
    # too (in its value form; it failed with "the CPU backend takes ranked
    # tensors"), and the writes reach the caller's tensors, a strided view
    # included, as in eager.
    def f(x, y):
        x.add_(y)
        y.mul_(2).add_(1)
        return x * 2

    c = kiln.compile(f, backend=backend)
    base = torch.randn(4, 3)
    x, y = torch.randn(3, 4), base.t()
    xe, ye_base = x.clone(), base.clone()
    want = f(xe, ye_base.t())
    torch.testing.assert_close(c(x, y), want)
    torch.testing.assert_close(x, xe)
    torch.testing.assert_close(base, ye_base)
