"""Python values a compiled function reads besides its arguments: globals,
closure cells, module attributes, attributes of the user's config objects
and modules, read directly or through helper functions. A capture bakes
them in as constants; kiln/_guards.py makes them part of every call's key,
so a changed value recompiles (as TorchDynamo's guards do) instead of
computing with the old one. Every result is compared with eager PyTorch
(the same function, called directly)."""

import sys
import types
import warnings

import pytest
import torch
import torch.nn as nn

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]

SCALE = 2.0
USE_RELU = True
MODE = "add"


class Cfg:
    depth = 2


cfg = types.SimpleNamespace(shift=1.0, dims=[0])
usercfg = types.ModuleType("usercfg")
usercfg.bias = 0.5


@pytest.fixture(autouse=True)
def _reset():
    global SCALE, USE_RELU, MODE
    kiln.reset()
    saved = (SCALE, USE_RELU, MODE, Cfg.depth, cfg.shift, cfg.dims,
             usercfg.bias, kiln.config.cache_size_limit)
    yield
    (SCALE, USE_RELU, MODE, Cfg.depth, cfg.shift, cfg.dims, usercfg.bias,
     kiln.config.cache_size_limit) = saved
    kiln.reset()


def check(compiled, fn, *args):
    got = compiled(*args)
    want = fn(*args)
    torch.testing.assert_close(got, want)


def set_global(name, value):
    globals()[name] = value


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_scalar(backend):
    def f(x):
        return x * SCALE
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(5)
    check(cf, f, x)
    set_global("SCALE", 3.5)
    check(cf, f, x)
    set_global("SCALE", 2.0)   # the first program again
    check(cf, f, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_flag_picks_branch(backend):
    def f(x):
        if USE_RELU:
            return torch.relu(x)
        return torch.sigmoid(x)
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(6)
    check(cf, f, x)
    set_global("USE_RELU", False)
    check(cf, f, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_string(backend):
    def f(x, y):
        return x + y if MODE == "add" else x * y
    cf = kiln.compile(f, backend=backend)
    x, y = torch.randn(3), torch.randn(3)
    check(cf, f, x, y)
    set_global("MODE", "mul")
    check(cf, f, x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_closure_cell(backend):
    k = 2.0

    def f(x):
        return x + k
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(4)
    check(cf, f, x)
    k = -7.25  # noqa: F841 (read by f through its cell)
    check(cf, f, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_helper_function_reads_global(backend):
    def helper(x):
        return x * SCALE

    def f(x):
        return helper(x) + 1
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(4)
    check(cf, f, x)
    set_global("SCALE", 0.25)
    check(cf, f, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_config_objects(backend):
    def f(x):
        for _ in range(Cfg.depth):
            x = torch.tanh(x) + cfg.shift
        return x.sum(cfg.dims) + usercfg.bias
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(3, 4)
    check(cf, f, x)
    Cfg.depth = 3
    check(cf, f, x)
    cfg.shift = -2.0
    check(cf, f, x)
    cfg.dims = [1]      # a list: guarded by its items
    check(cf, f, x)
    usercfg.bias = 4.0
    check(cf, f, x)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.alpha = 2.0
        self.act = "relu"

    def forward(self, x):
        y = self.lin(x) * self.alpha + SCALE
        return torch.relu(y) if self.act == "relu" else torch.tanh(y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_attributes_and_globals(backend):
    torch.manual_seed(0)
    m = Scaled()
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(3, 4)
    check(cm, m, x)
    m.alpha = -1.5
    check(cm, m, x)
    m.act = "tanh"
    check(cm, m, x)
    set_global("SCALE", 10.0)
    check(cm, m, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtin_module_attribute(backend):
    # A converter reads LeakyReLU's negative_slope once; changing it
    # recompiles.
    m = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.1))
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(8, 4)
    check(cm, m, x)
    m[1].negative_slope = 0.5
    check(cm, m, x)


class Helper:
    def __init__(self, layer):
        self.layer = layer
        self.scale = 3.0

    def run(self, x):
        return self.layer(x) * self.scale


@pytest.mark.parametrize("backend", BACKENDS)
def test_bound_method_object_attribute(backend):
    h = Helper(nn.Linear(4, 2))
    cf = kiln.compile(h.run, backend=backend)
    x = torch.randn(2, 4)
    check(cf, h.run, x)
    h.scale = -0.5
    check(cf, h.run, x)


def test_closure_module_attribute():
    layer = Scaled()

    def f(x):
        return layer(x) - 1
    cf = kiln.compile(f, backend="cpu")
    x = torch.randn(2, 4)
    check(cf, f, x)
    layer.alpha = 5.0
    check(cf, f, x)


def test_values_seen_before_reuse_their_programs():
    def f(x):
        return x * SCALE
    cf = kiln.compile(f, backend="cpu")
    x = torch.randn(4)
    for v in [1.0, 2.0, 1.0, 2.0, 1.0]:
        set_global("SCALE", v)
        check(cf, f, x)
    assert len(cf._kiln.programs) == 2


def test_cache_size_limit_then_eager_with_warning():
    kiln.config.cache_size_limit = 3

    def f(x):
        return x * SCALE
    cf = kiln.compile(f, backend="cpu")
    x = torch.randn(4)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for v in range(6):
            set_global("SCALE", float(v))
            check(cf, f, x)
    msgs = [str(m.message) for m in w if "cache_size_limit" in
            str(m.message)]
    assert len(msgs) == 1, msgs
    assert "SCALE: 2.0 -> 3.0" in msgs[0], msgs[0]
    assert len(cf._kiln.programs) == 3


def test_verbose_names_the_change(capsys):
    def f(x):
        return x * SCALE
    cf = kiln.compile(f, backend="eager")
    x = torch.randn(4)
    cf(x)
    kiln.config.verbose = True
    try:
        set_global("SCALE", 9.0)
        check(cf, f, x)
    finally:
        kiln.config.verbose = False
    err = capsys.readouterr().err
    assert "SCALE: 2.0 -> 9.0" in err, err


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_training_with_changed_global(backend):
    torch.manual_seed(1)
    m = Scaled()
    ref = Scaled()
    ref.load_state_dict(m.state_dict())
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(5, 4)
    for v in [2.0, 0.5]:
        set_global("SCALE", v)
        m.alpha = ref.alpha = v
        cm(x).pow(2).sum().backward()
        ref(x).pow(2).sum().backward()
        torch.testing.assert_close(m.lin.weight.grad, ref.lin.weight.grad)
        m.zero_grad()
        ref.zero_grad()


def test_graph_break_function_reads_global():
    def f(x):
        y = x * SCALE
        if y.sum() > 0:     # a graph break
            return y + SCALE
        return y - SCALE
    cf = kiln.compile(f, backend="cpu")
    x = torch.ones(3)
    check(cf, f, x)
    set_global("SCALE", -4.0)
    check(cf, f, x)


def test_unrelated_torch_globals_not_guarded():
    # torch, math and kiln's own modules are not walked.
    from kiln import _guards
    g = _guards.Guards(fn=lambda x: torch.nn.functional.relu(x) * SCALE)
    assert g.count == 1, g._labels
    assert "SCALE" in g._labels[0]


BIAS = torch.ones(3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_tensor_rebound_and_updated(backend):
    set_global("BIAS", torch.ones(3))

    def f(x):
        return x + BIAS
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(3)
    check(cf, f, x)
    BIAS.add_(2)                          # in place: the same program
    check(cf, f, x)
    set_global("BIAS", torch.full((3,), -4.0))   # a new tensor: recaptured
    check(cf, f, x)
    assert len(cf._kiln.programs) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_closure_tensor_rebound(backend):
    t = torch.ones(2)

    def f(x):
        return x * t
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(2)
    check(cf, f, x)
    t.mul_(3)
    check(cf, f, x)
    t = torch.tensor([5.0, -1.0])  # noqa: F841 (read by f through its cell)
    check(cf, f, x)


def test_scalar_attribute_becomes_tensor():
    m = Scaled()
    cm = kiln.compile(m, backend="cpu")
    x = torch.randn(2, 4)
    check(cm, m, x)
    m.alpha = torch.tensor(3.0)   # a scalar attribute turned tensor
    check(cm, m, x)
    m.alpha = torch.tensor([1.0, 2.0, 3.0, 4.0])
    check(cm, m, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_replaced_submodule_recaptures(backend):
    torch.manual_seed(2)
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), Scaled())
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(3, 4)
    check(cm, m, x)
    m[1] = nn.Tanh()                 # same tree shape, another module
    check(cm, m, x)
    m[2] = Scaled()                  # new guards are found on the new tree
    check(cm, m, x)
    m[2].alpha = -3.0
    check(cm, m, x)
    m.add_module("3", nn.Sigmoid())
    check(cm, m, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_default_dtype_change_recaptures(backend):
    def f(x):
        return torch.full((3,), 0.1) * x.sum() + torch.arange(3) / 3
    cf = kiln.compile(f, backend=backend)
    x = torch.ones(3, dtype=torch.int64)
    check(cf, f, x)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        got, want = cf(x), f(x)
    finally:
        torch.set_default_dtype(old)
    assert got.dtype == want.dtype == torch.float64
    torch.testing.assert_close(got, want)
    check(cf, f, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_capture_keeps_its_own_tensor_constants(backend):
    # torch.full((3,), SCALE) is made eagerly while tracing: a tensor
    # constant on the capture's root. A capture for another SCALE must not
    # replace the first program's constant (it did: SCALE 2 -> 3 -> 2 gave
    # 3s).
    def f(x):
        return x * torch.full((3,), SCALE)
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(3)
    for v in [2.0, 3.0, 2.0, 3.0]:
        set_global("SCALE", v)
        check(cf, f, x)


OPTS = {"scale": 2.0, "act": "relu", "dims": (0,)}
deep = types.SimpleNamespace(sub=types.SimpleNamespace(k=2.0, inner=types.SimpleNamespace(n=1)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_dict_items(backend):
    # A dict of settings read by key: its items are guarded (a changed,
    # added or removed item recaptures), as Dynamo's DICT_KEYS / per-item
    # guards do.
    saved = dict(OPTS)

    def f(x):
        y = x * OPTS["scale"]
        y = torch.relu(y) if OPTS["act"] == "relu" else torch.tanh(y)
        return y.sum(OPTS["dims"]) + OPTS.get("bias", 0.0)
    try:
        cf = kiln.compile(f, backend=backend)
        x = torch.randn(3, 4)
        check(cf, f, x)
        OPTS["scale"] = -3.0
        check(cf, f, x)
        OPTS["act"] = "tanh"
        check(cf, f, x)
        OPTS["dims"] = (1,)
        check(cf, f, x)
        OPTS["bias"] = 5.0
        check(cf, f, x)
        del OPTS["bias"]
        check(cf, f, x)
    finally:
        OPTS.clear()
        OPTS.update(saved)


@pytest.mark.parametrize("backend", BACKENDS)
def test_closure_dict_and_nested_dict(backend):
    opts = {"a": {"k": 2.0}, "n": 2}

    def f(x):
        for _ in range(opts["n"]):
            x = x * opts["a"]["k"] + 1
        return x
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(5)
    check(cf, f, x)
    opts["a"]["k"] = 0.5
    check(cf, f, x)
    opts["n"] = 3
    check(cf, f, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_attributes_two_and_three_levels_deep(backend):
    saved = (deep.sub.k, deep.sub.inner.n)

    def f(x):
        return (x * deep.sub.k).sum(deep.sub.inner.n)
    try:
        cf = kiln.compile(f, backend=backend)
        x = torch.randn(2, 3)
        check(cf, f, x)
        deep.sub.k = -1.0
        check(cf, f, x)
        deep.sub.inner.n = 0
        check(cf, f, x)
        deep.sub = types.SimpleNamespace(k=4.0, inner=types.SimpleNamespace(n=1))
        check(cf, f, x)
    finally:
        deep.sub = types.SimpleNamespace(
            k=saved[0], inner=types.SimpleNamespace(n=saved[1]))


class WithSettings(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.cfg = {"alpha": 2.0, "act": "relu"}
        self.opts = types.SimpleNamespace(beta=1.0)

    def forward(self, x):
        y = self.lin(x) * self.cfg["alpha"] + self.opts.beta
        return torch.relu(y) if self.cfg["act"] == "relu" else torch.tanh(y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_dict_and_object_attributes(backend):
    torch.manual_seed(3)
    m = WithSettings()
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(3, 4)
    check(cm, m, x)
    m.cfg["alpha"] = -0.5
    check(cm, m, x)
    m.cfg["act"] = "tanh"
    check(cm, m, x)
    m.opts.beta = 7.0
    check(cm, m, x)


def helper_a(x):
    return x + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebound_global_object_and_helper(backend):
    # Another object assigned to a global config name, and another helper
    # function assigned to a global name: both are read, not the first
    # call's.
    set_global("settings", types.SimpleNamespace(k=2.0))
    set_global("helper", helper_a)

    def f(x):
        return helper(x) * settings.k   # noqa: F821 (set above)
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(4)
    check(cf, f, x)
    set_global("settings", types.SimpleNamespace(k=-3.0))
    check(cf, f, x)
    settings.k = 0.25                   # noqa: F821
    check(cf, f, x)
    set_global("helper", lambda x: x * 10)
    check(cf, f, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dict_with_other_values_guards_its_scalars(backend):
    # A dict that also holds a module cannot be guarded as a whole: its
    # scalar items are guarded one by one.
    torch.manual_seed(4)
    parts = {"layer": nn.Linear(3, 3), "scale": 2.0, "inner": {"shift": 1.0}}

    def f(x):
        return parts["layer"](x) * parts["scale"] + parts["inner"]["shift"]
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(2, 3)
    check(cf, f, x)
    parts["scale"] = -1.0
    check(cf, f, x)
    parts["inner"]["shift"] = 9.0
    check(cf, f, x)
    parts["inner"] = {"shift": -9.0}
    check(cf, f, x)


def test_verbose_names_the_dict_item(capsys):
    saved = dict(OPTS)

    def f(x):
        return x * OPTS["scale"]
    try:
        kiln.config.verbose = True
        cf = kiln.compile(f, backend="eager")
        cf(torch.ones(2))
        OPTS["scale"] = 4.0
        cf(torch.ones(2))
    finally:
        kiln.config.verbose = False
        OPTS.clear()
        OPTS.update(saved)
    err = capsys.readouterr().err
    assert "OPTS" in err and "'scale': 2.0" in err and "'scale': 4.0" in err, err


# --- lists: guarded by their items (Dynamo's LIST_LENGTH + item guards)

SIZES = [1.0, 2.0]
LOGGED = []
WEIGHTS = [torch.ones(3), torch.zeros(3)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_list_item_changed_in_place(backend):
    # Before: the list was guarded by identity, so `SIZES[0] = 3.0` kept
    # the first capture's 1.0 (a silent wrong answer).
    SIZES[:] = [1.0, 2.0]

    def f(x):
        return x * SIZES[0] + SIZES[-1]
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(3)
    check(cf, f, x)
    SIZES[0] = 3.0
    check(cf, f, x)
    SIZES.append(-5.0)   # a new last item
    check(cf, f, x)
    SIZES.pop(0)
    check(cf, f, x)
    assert len(cf._kiln.programs) == 4
    SIZES[:] = [3.0, 2.0, -5.0]   # seen before: its program again
    check(cf, f, x)
    assert len(cf._kiln.programs) == 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_in_module_closure_and_dict(backend):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.scales = [2.0, 3.0]
            self.opts = {"w": [1.0, [0.5, 0.25]]}

        def forward(self, x):
            return self.lin(x) * self.scales[1] + self.opts["w"][1][0]
    m = M()
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(2, 3)
    check(cm, m, x)
    m.scales[1] = 7.0
    check(cm, m, x)
    m.opts["w"][1][0] = -4.0   # three levels down
    check(cm, m, x)

    def make():
        shift = [1.0]

        def g(x):
            return x - shift[0]
        return g, shift
    g, shift = make()
    cg = kiln.compile(g, backend=backend)
    check(cg, g, x)
    shift[0] = 9.0
    check(cg, g, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_in_global_list_replaced(backend):
    WEIGHTS[:] = [torch.ones(3), torch.zeros(3)]

    def f(x):
        return x + WEIGHTS[0]
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(3)
    check(cf, f, x)
    WEIGHTS[0] = torch.full((3,), 7.0)
    check(cf, f, x)


def test_list_the_code_appends_to_is_not_a_recompile():
    # A list the captured code changes itself: its items differ after
    # every capture, so it is guarded by identity from then on (no
    # recapture per call), with one warning that the append happens when
    # kiln captures.
    del LOGGED[:]

    def f(x):
        LOGGED.append("called")
        return x * 2
    cf = kiln.compile(f, backend="cpu")
    x = torch.randn(3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(4):
            check(cf, lambda x: x * 2, x)
    assert len(cf._kiln.programs) == 1
    assert LOGGED == ["called"]
    msgs = [str(a.message) for a in w if "while it is captured" in
            str(a.message)]
    assert len(msgs) == 1 and "LOGGED" in msgs[0], msgs
    assert w[0].filename == __file__
    # Another list assigned to the name is a change (identity).
    set_global("LOGGED", [])
    check(cf, lambda x: x * 2, x)
    assert len(cf._kiln.programs) == 2


def test_list_appended_after_a_graph_break_runs_every_call():
    log = []

    def f(x):
        y = x * 2
        kiln.graph_break()
        log.append(1)
        return y + 1
    cf = kiln.compile(f, backend="cpu")
    x = torch.randn(3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            torch.testing.assert_close(cf(x), x * 2 + 1)
    assert log == [1, 1, 1]
    assert not [a for a in w if "while it is captured" in str(a.message)]



# --- NumPy scalars and arrays read by the code

NP_SCALE = None
NP_ARRAY = None


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_scalars(backend):
    # Before: `x * np.float32(2)` could not be traced ("argument of type
    # numpy.float32"), and a global NumPy scalar was not guarded.
    np = pytest.importorskip("numpy")
    set_global("NP_SCALE", np.float32(2.0))

    def f(x, k):
        return (x * NP_SCALE)[:k].sum(0) + k
    cf = kiln.compile(f, backend=backend)
    for dtype in (torch.float32, torch.float16, torch.int64):
        x = torch.arange(12, dtype=dtype).reshape(4, 3)
        check(cf, f, x, np.int64(2))
        set_global("NP_SCALE", np.float64(-1.5))
        check(cf, f, x, np.int32(3))
        set_global("NP_SCALE", np.int16(3))
        check(cf, f, x, np.int64(1))
        set_global("NP_SCALE", np.float32(2.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_array_global(backend):
    np = pytest.importorskip("numpy")
    set_global("NP_ARRAY", np.array([1.0, 2.0, 3.0], dtype=np.float32))

    def f(x):
        return x + torch.from_numpy(NP_ARRAY)
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(3)
    check(cf, f, x)
    NP_ARRAY[0] = 10.0       # shared with the program's constant
    check(cf, f, x)
    set_global("NP_ARRAY", np.array([5.0, 5.0, 5.0], dtype=np.float32))
    check(cf, f, x)          # before: the first array's values


# --- a global tensor's data baked in at capture (read into Python, or
# computed into a constant): guarded by its version counter

GT = None


def _gt():
    set_global("GT", torch.tensor([1.0, 2.0, 3.0]))


def _data_cases():
    def tolist(x):
        return x + GT.tolist()[0]

    def item(x):
        return x * GT[1].item()

    def branch(x):
        if GT.sum() > 0:
            return x + 1
        return x - 1

    def derived(x):
        return x + GT * 2

    def as_int(x):
        return x[: int(GT[0])]

    def indexed(x):
        return x + GT[[2, 1, 0]] + GT[1:].sum()
    return [tolist, item, branch, derived, as_int, indexed]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(6))
def test_global_tensor_data_changed_in_place(backend, case):
    # Before: each of these kept the first capture's value after GT was
    # changed in place (the trace computes on the real GT).
    _gt()
    f = _data_cases()[case]
    cf = kiln.compile(f, backend=backend)
    x = torch.arange(3.0)
    check(cf, f, x)
    with torch.no_grad():
        GT.mul_(-1).add_(3)   # [2, 1, 0]
    check(cf, f, x)
    check(cf, f, x)
    assert len(cf._kiln.programs) == 2
    with torch.no_grad():
        GT[0] = 1.0
    check(cf, f, x)


def test_global_tensor_read_live_does_not_recapture():
    # The program reads GT itself (or a view of it) on every call: its
    # in-place changes are seen without a recapture.
    _gt()

    def f(x):
        return (x + GT + GT.t())[1:] + GT[1:]
    cf = kiln.compile(f, backend="cpu")
    x = torch.arange(3.0)
    check(cf, f, x)
    GT.add_(5)
    check(cf, f, x)
    assert len(cf._kiln.programs) == 1


def test_data_read_named_in_recompile_reason(capsys):
    _gt()

    def f(x):
        return x * GT[1].item()
    cf = kiln.compile(f, backend="eager")
    x = torch.ones(3)
    kiln.config.verbose = True
    try:
        check(cf, f, x)
        GT[1] = 4.0
        check(cf, f, x)
    finally:
        kiln.config.verbose = False
    err = capsys.readouterr().err
    assert "recompiling" in err and "data of a 3 tensor read by item" in err


OFFSET = 1.0


def _offset(x):
    if isinstance(OFFSET, list):
        return x * OFFSET[0] + OFFSET[1]
    return x + OFFSET


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_scalar_then_list(backend):
    # OFFSET held a number at the first call (read from the globals as it
    # is on every call); a list assigned later is not hashable as it is:
    # the key freezes it (its items) and the call recaptures.
    global OFFSET
    cf = kiln.compile(_offset, backend=backend)
    x = torch.randn(3)
    try:
        check(cf, _offset, x)
        OFFSET = [2.0, 3.0]
        check(cf, _offset, x)
        OFFSET[1] = -1.0
        check(cf, _offset, x)
        assert len(cf._kiln.programs) == 3
    finally:
        OFFSET = 1.0


def test_global_scalar_then_tensor_is_guarded_by_identity():
    # A name that held a number at the first call and holds a tensor now
    # is in the key as the tensor's identity (a tensor's == is
    # elementwise, not a key's equality).
    global OFFSET
    from kiln._guards import Guards, _Ident
    g = Guards(_offset)
    try:
        assert g.values() == 1.0 or g.values() == (1.0,)
        OFFSET = torch.ones(3)
        vals = g.values()
        assert [type(v) for v in vals] == [_Ident]
        assert vals[0].obj is OFFSET
        hash(vals)
        OFFSET = [torch.ones(3), 2.0]
        vals = g.values()
        hash(vals)
        assert vals[0].obj is OFFSET
    finally:
        OFFSET = 1.0


def _cell_and_offset():
    t = torch.ones(2)

    def g(x):
        return x * t + (OFFSET[0] if isinstance(OFFSET, list) else OFFSET)

    def set_t(v):
        nonlocal t
        t = v
    return g, set_t


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_cell_stays_guarded_when_key_is_refrozen(backend):
    # OFFSET turns into a list, so the whole key is frozen again on every
    # call; the closure's tensor in it (guarded by identity) must stay its
    # identity: another tensor in the cell recaptures (it read as missing,
    # and the call ran the old program with the old tensor).
    global OFFSET
    g, set_t = _cell_and_offset()
    cf = kiln.compile(g, backend=backend)
    x = torch.ones(2)
    try:
        check(cf, g, x)
        OFFSET = [1.0]
        check(cf, g, x)
        set_t(torch.full((2,), 5.0))
        check(cf, g, x)
    finally:
        OFFSET = 1.0


GT2 = torch.ones(2)


def test_reassigned_global_tensor_named_in_recompile_reason(capsys):
    global GT2

    def f(x):
        return x * GT2
    cf = kiln.compile(f, backend="eager")
    x = torch.ones(2)
    kiln.config.verbose = True
    try:
        check(cf, f, x)
        GT2 = torch.zeros(2)
        check(cf, f, x)
    finally:
        kiln.config.verbose = False
        GT2 = torch.ones(2)
    err = capsys.readouterr().err
    assert "recompiling f: global %s.GT2: the tensor at" % __name__ in err, err
