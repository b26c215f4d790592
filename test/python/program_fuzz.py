"""A generator of random PyTorch programs and a differential check of
kiln.compile against eager PyTorch (issue 15: the C++ fuzzers never reach
the Python frontend, its tracer and its importer).

`generate(seed)` writes a function as Python source:

    def prog(a0, a1, a2):
        v0 = torch.relu(a0)
        v1 = v0 + a1[:, 1:]
        v1.mul_(0.5)
        ...
        return (v4, v7)

Each statement is drawn from the op templates below over the values made
so far (inputs and earlier results) and is kept only if eager PyTorch runs
it on the example inputs (so every program is valid by construction, and
shapes and dtypes come from PyTorch itself). Programs mix elementwise ops
with broadcasting, reductions, views (slices, transposes, reshapes,
expand), in-place ops on intermediates and on views of them, writes to
inputs (mutation the caller sees), indexing (gather, index_select,
masked_fill, scatter_add), concatenation, products and dtype changes.

`check(src, backend, mode)` compiles it with kiln.compile and compares
with eager: results (structure, dtype, shape, values at float32's
tolerance), the inputs after the call (mutations), and in `train` mode the
gradients of the float inputs. An eager error skips the program; a kiln
error that is not a clean refusal (kiln.Unsupported) is a finding.

    KILN_BUILD_DIR=$PWD/build PYTHONPATH=python \\
      /usr/bin/python3 test/python/program_fuzz.py --seeds 0-199 --mode infer
"""

import argparse
import random
import sys
import traceback

import torch
import torch.nn.functional as F

FLOAT = (torch.float32, torch.float64)


class Gen:
    def __init__(self, seed, mode):
        self.rng = random.Random(seed)
        self.mode = mode
        self.lines = []
        self.env = {}       # name -> example value (eager)
        self.inputs = []
        self.counter = 0
        self.written_inputs = set()

    # ----- helpers
    def pick(self, pred=lambda v: True):
        names = [n for n, v in self.env.items()
                 if isinstance(v, torch.Tensor) and pred(v)]
        return self.rng.choice(names) if names else None

    def fl(self, v):
        return v.dtype in FLOAT

    def dim(self, name):
        nd = self.env[name].ndim
        return self.rng.randrange(-nd, nd) if nd else None

    def new_input(self, shape=None, kind=None, high=None, buffer=False):
        """A new input of the program (`buffer`: a running statistic,
        written by the program and never trained)."""
        r = self.rng
        if shape is None:
            shape = tuple(r.randint(1, 5) for _ in range(r.randint(1, 4)))
        if kind is None:
            kind = r.random()
        name = "a%d" % len(self.inputs)
        if high is not None:
            t = torch.randint(0, high, shape, generator=torch.Generator()
                              .manual_seed(r.randrange(1 << 30)))
        elif kind == "pos":
            t = torch.rand(shape, generator=torch.Generator().manual_seed(
                r.randrange(1 << 30))) + 0.5
        elif kind < 0.8:
            t = torch.randn(shape, dtype=torch.float32,
                            generator=torch.Generator().manual_seed(
                                r.randrange(1 << 30)))
        elif kind < 0.9:
            t = torch.randn(shape, dtype=torch.float64,
                            generator=torch.Generator().manual_seed(
                                r.randrange(1 << 30)))
        else:
            t = torch.randint(-4, 5, shape, generator=torch.Generator()
                              .manual_seed(r.randrange(1 << 30)))
        if buffer:
            t.kiln_fuzz_buffer = True
        self.inputs.append((name, t))
        self.env[name] = t.clone()
        return name

    def names(self):
        """The names an expression may use besides the values."""
        return {"torch": torch, "F": F}

    def emit(self, expr, inplace=False):
        """Runs `expr` (or the statement) on the examples; keeps it if eager
        accepts it."""
        env = dict(self.env, **self.names())
        if inplace:
            saved = {n: v.clone() for n, v in self.env.items()}
            try:
                exec(expr, env)
            except Exception:
                # (undo a write that failed part way; an expanded tensor
                # cannot be written: its values did not change either)
                for n, v in saved.items():
                    try:
                        self.env[n].copy_(v)
                    except RuntimeError:
                        pass
                return None
            self.lines.append(expr)
            return True
        try:
            v = eval(expr, env)
        except Exception:
            return None
        if not isinstance(v, torch.Tensor) or v.numel() > 4096:
            return None
        if v.dtype in FLOAT and not torch.isfinite(v).all():
            return None
        name = "v%d" % self.counter
        self.counter += 1
        self.lines.append("%s = %s" % (name, expr))
        self.env[name] = v
        return name

    # ----- templates: each returns an expression (or a statement for
    # in-place ones) or None
    def t_unary(self):
        x = self.pick(self.fl)
        if x is None:
            return None
        op = self.rng.choice([
            "torch.relu({x})", "torch.sigmoid({x})", "torch.tanh({x})",
            "torch.exp({x}.clamp(-5, 5))", "{x}.abs()", "-{x}",
            "torch.sin({x})", "torch.cos({x})", "torch.sqrt({x}.abs() + 1)",
            "torch.log({x}.abs() + 1)", "F.gelu({x})", "F.silu({x})",
            "F.softplus({x})", "{x}.clamp(min=-0.5, max=0.7)",
            "torch.erf({x})", "F.leaky_relu({x}, 0.1)", "{x} * {x}",
            "torch.rsqrt({x}.abs() + 0.5)", "F.hardswish({x})",
            "torch.floor({x} * 3) / 3", "torch.sign({x})",
            "torch.nan_to_num({x})", "F.elu({x})", "torch.square({x})",
            "{x}.pow(2)", "torch.reciprocal({x}.abs() + 1)"])
        return op.format(x=x)

    def partner(self, x):
        """A value whose shape broadcasts with x's (another value, a view of
        one, or a Python number)."""
        r = self.rng.random()
        if r < 0.2:
            return repr(round(self.rng.uniform(-2, 2), 3))
        shape = self.env[x].shape
        cands = [n for n, v in self.env.items()
                 if isinstance(v, torch.Tensor) and _broadcasts(v.shape, shape)
                 and v.dtype != torch.bool]
        if cands and r < 0.8:
            return self.rng.choice(cands)
        return x

    def t_binary(self):
        x = self.pick(lambda v: v.dtype != torch.bool)
        if x is None:
            return None
        y = self.partner(x)
        op = self.rng.choice([
            "{x} + {y}", "{x} - {y}", "{x} * {y}", "{x} / ({y} * 0 + 2)",
            "torch.maximum({x}, {y} + 0 * {x})", "torch.minimum({x}, {y} * 1.0 + 0 * {x})",
            "torch.where({x} > 0, {x}, {y} + 0 * {x})", "{y} - {x}",
            "torch.add({x}, {y}, alpha=2)", "torch.atan2({x} * 1.0, {y} * 1.0 + 3)",
            "({x} > {y})", "({x} == {y})", "torch.lerp({x} * 1.0, {y} * 1.0 + 0 * {x}, 0.3)",
            "{x} // 2 if {x}.dtype == torch.int64 else {x} % 2",
            "torch.fmod({x}, 1.5)", "torch.remainder({x}, 2)"])
        return op.format(x=x, y=y)

    def t_reduce(self):
        x = self.pick(lambda v: v.ndim > 0)
        if x is None:
            return None
        d = self.dim(x)
        kd = self.rng.choice(["True", "False"])
        v = self.env[x]
        if v.dtype in FLOAT:
            op = self.rng.choice([
                "{x}.sum({d}, keepdim={k})", "{x}.mean({d}, keepdim={k})",
                "{x}.amax({d}, keepdim={k})", "{x}.amin({d}, keepdim={k})",
                "{x}.var({d}, keepdim={k})", "{x}.std({d}, unbiased=False, keepdim={k})",
                "torch.softmax({x}, {d})", "torch.log_softmax({x}, {d})",
                "{x}.cumsum({d})", "torch.logsumexp({x}, {d}, keepdim={k})",
                "{x}.norm(dim={d}, keepdim={k})", "{x}.sum()", "{x}.mean()",
                "{x}.max({d}, keepdim={k})[0]", "{x}.prod({d}, keepdim={k})",
                "{x}.cumprod({d})"])
        else:
            op = self.rng.choice([
                "{x}.sum({d}, keepdim={k})", "{x}.amax({d})",
                "{x}.float().mean({d})", "{x}.any({d})", "{x}.all({d})",
                "{x}.sum()", "{x}.cumsum({d})"])
        if x.startswith("a") and v.dtype in FLOAT and self.rng.random() < 0.3:
            op = self.rng.choice(["{x}.argmax({d}, keepdim={k})",
                                  "{x}.argmin({d})"])
        return op.format(x=x, d=d, k=kd)

    def t_view(self):
        x = self.pick(lambda v: v.ndim > 0)
        if x is None:
            return None
        v = self.env[x]
        nd = v.ndim
        r = self.rng
        d = self.dim(x)
        choices = [
            "{x}.transpose({d}, {e})", "{x}.unsqueeze({u})",
            "{x}.reshape({rs})", "{x}.flatten()", "{x}.t()" if nd <= 2 else None,
            "{x}.permute({perm})", "{x}[{sl}]", "{x}.select({d}, {i})",
            "{x}.narrow({d}, {s}, 1)", "{x}.expand({ex})", "{x}.squeeze()",
            "{x}.chunk(2, {d})[0]", "{x}.flip({d})", "{x}.contiguous()",
            "{x}.roll(1, {d})", "{x}.repeat({rep})", "{x}.view(-1)",
            "{x}.movedim({d}, 0)", "{x}.unbind({d})[0]",
        ]
        op = r.choice([c for c in choices if c])
        size = v.shape[d] if nd else 1
        shape = list(v.shape)
        rs = list(shape)
        if len(rs) > 1 and r.random() < 0.5:
            rs = [rs[0] * rs[1]] + rs[2:]
        elif r.random() < 0.5:
            rs = [-1]
        perm = list(range(nd))
        r.shuffle(perm)
        sl = []
        for s in shape:
            k = r.random()
            sl.append(":" if k < 0.4 else "1:" if k < 0.6 else "::2"
                      if k < 0.8 else ":-1" if s > 1 else ":")
        ex = [str(r.randint(2, 3))] + [str(s) if s != 1 or r.random() < 0.5
                                       else str(r.randint(2, 3))
                                       for s in shape]
        return op.format(x=x, d=d, e=self.dim(x), u=r.randint(-nd - 1, nd),
                         rs=tuple(rs), perm=tuple(perm),
                         sl=", ".join(sl) or "...",
                         i=r.randrange(size) if size else 0,
                         s=r.randrange(size) if size else 0,
                         ex=", ".join(ex), rep=", ".join(
                             str(r.randint(1, 2)) for _ in range(nd)))

    def t_inplace(self):
        """An in-place op on an intermediate, on a view of one, or on an
        input (inference mode only: an input that requires grad is a leaf)."""
        r = self.rng
        allow_inputs = self.mode == "infer"
        x = self.pick(lambda v: v.dtype in FLOAT)
        if x is None or (x.startswith("a") and not allow_inputs):
            return None
        target = x
        if r.random() < 0.4 and self.env[x].ndim > 0:
            d = self.dim(x)
            target = r.choice(["%s.select(%d, 0)" % (x, d),
                               "%s.narrow(%d, 0, 1)" % (x, d),
                               "%s[..., ::2]" % x, "%s.t()" % x
                               if self.env[x].ndim == 2 else "%s[...]" % x,
                               "%s.transpose(0, -1)" % x])
        if r.random() < 0.15:
            # (an alias that autograd does not see: the write reaches x.
            # Not `.data` in training: eager's backward then reads the
            # written values wherever autograd saved x (prod's result),
            # which is autograd's internals, not a semantics; a write
            # through detach() bumps x's version: eager raises there)
            target = "%s.%s" % (target, r.choice(
                ["detach()", "data"] if self.mode == "infer"
                else ["detach()"]))
        y = self.partner(x)
        op = r.choice(["{t}.add_({y})", "{t}.mul_(0.5)", "{t}.clamp_(-1, 1)",
                       "{t}.relu_()", "{t}.copy_({y} * 1.0 + 0 * {t})",
                       "{t}.sub_({y}, alpha=0.5)", "{t}.fill_(0.25)",
                       "{t}.zero_()", "{t}.masked_fill_({t} > 0.5, -1.0)",
                       "{t}.addcmul_({t}, {t}, value=0.1)", "{t}.sigmoid_()",
                       "{t}[...] = {y}", "{t}.div_(2)", "{t}.neg_()",
                       "{t}.exp_() if False else {t}.tanh_()"])
        stmt = op.format(t=target, y=y)
        if x.startswith("a"):
            self.written_inputs.add(x)
        return ("stmt", stmt)

    def t_index(self):
        x = self.pick(lambda v: v.ndim > 0 and v.dtype in FLOAT)
        if x is None:
            return None
        v = self.env[x]
        r = self.rng
        d = r.randrange(v.ndim)
        n = v.shape[d]
        if n == 0:
            return None
        idx = [r.randrange(n) for _ in range(r.randint(1, 4))]
        ops = [
            "{x}.index_select({d}, torch.tensor({idx}))",
            "{x}.masked_fill({x} > 0.3, 0.0)",
            "torch.gather({x}, {d}, torch.zeros_like({x}, dtype=torch.long)"
            " + {j})",
            "{x}.scatter_add({d}, torch.zeros_like({x}, dtype=torch.long), "
            "{x})",
            "torch.cat([{x}, {x} * 2], {d})", "torch.stack([{x}, {x}], {d})",
            "{x}[torch.tensor({idx})]", "{x}[{x} > 0.3]",
            "torch.where({x} > 0)[0].float()" if False else
            "{x}.index_add({d}, torch.tensor({idx}), {x}.index_select({d}, "
            "torch.tensor({idx})))",
            "F.pad({x}, (1, 0))", "torch.tril({x})" if v.ndim == 2 else
            "{x}.clone()",
            "{x}.new_zeros({shape}) + {x}", "torch.ones_like({x}) * {x}.sum()",
            "{x}.to(torch.float64)", "{x}.to(torch.int64)",
            "{x}.float() if {x}.dtype == torch.float64 else {x}.double()",
            "{x}.masked_select({x} > 0).sum()",
        ]
        op = r.choice(ops)
        return op.format(x=x, d=d, idx=idx, j=r.randrange(n),
                         shape=tuple(v.shape))

    def t_matmul(self):
        x = self.pick(lambda v: v.ndim >= 1 and v.dtype in FLOAT)
        if x is None:
            return None
        v = self.env[x]
        k = v.shape[-1]
        ys = [n for n, w in self.env.items() if isinstance(w, torch.Tensor)
              and w.dtype == v.dtype and w.ndim >= 1 and
              (w.shape[0] == k if w.ndim <= 2 else w.shape[-2] == k)]
        if ys and self.rng.random() < 0.6:
            y = self.rng.choice(ys)
            return self.rng.choice(["{x} @ {y}", "torch.matmul({x}, {y})"])\
                .format(x=x, y=y)
        return "{x} @ {x}.transpose(-1, -2)".format(x=x) if v.ndim >= 2 \
            else "torch.dot({x}, {x})".format(x=x)

    def t_break(self):
        """Python reading tensor data: a graph break in kiln."""
        x = self.pick(lambda v: v.dtype in FLOAT)
        y = self.pick(lambda v: v.dtype in FLOAT)
        if x is None:
            return None
        return self.rng.choice([
            "{y} * float({x}.sum())",
            # (thresholds away from 0: a sum or a mask of values that are
            # 0 up to rounding, a layer_norm's, would decide by rounding)
            "{y} + 1 if {x}.sum().item() > 0.37 else {y} - 1",
            # (a count of values away from 0: a layer_norm over one
            # element is 0 in kiln and 1e-5 in eager, rounding either way)
            "{y} * len(({x}.abs() > 0.37).nonzero())",
            "{y}[: max(1, int({x}.abs().sum()) % 3)]"]).format(x=x, y=y)

    def t_nn(self):
        """torch.nn.functional layers: their weights (and BatchNorm's
        running statistics, written in training mode) are new inputs."""
        r = self.rng
        x = self.pick(lambda v: v.dtype == torch.float32 and v.ndim >= 2
                      and min(v.shape) > 0)
        if x is None:
            return None
        v = self.env[x]
        opts = ["linear", "layer_norm", "dropout0"]
        if v.ndim == 2:
            opts += ["cross_entropy", "embedding", "batch_norm1d"]
        if v.ndim == 4:
            opts += ["conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg",
                     "batch_norm", "interpolate", "group_norm",
                     "conv_transpose2d"]
        if v.ndim == 3:
            opts += ["conv1d", "max_pool1d"]
        op = r.choice(opts)
        sh = v.shape
        if op == "linear":
            n_out = r.randint(1, 5)
            w = self.new_input((n_out, sh[-1]), 0.0)
            bias = (", " + self.new_input((n_out,), 0.0)) \
                if r.random() < 0.5 else ""
            return "F.linear(%s, %s%s)" % (x, w, bias)
        if op == "layer_norm":
            if r.random() < 0.5:
                return "F.layer_norm(%s, %s)" % (x, tuple(sh[-1:]))
            w = self.new_input(tuple(sh[-1:]), 0.0)
            bb = self.new_input(tuple(sh[-1:]), 0.0)
            return "F.layer_norm(%s, %s, %s, %s)" % (x, tuple(sh[-1:]), w,
                                                     bb)
        if op == "dropout0":
            return "F.dropout(%s, p=0.0)" % x
        if op == "cross_entropy":
            t = self.new_input((sh[0],), high=sh[1])
            return "F.cross_entropy(%s, %s%s)" % (
                x, t, r.choice(["", ", label_smoothing=0.1",
                                ", reduction='sum'"]))
        if op == "embedding":
            idx = self.new_input((r.randint(1, 4),), high=sh[0])
            return "F.embedding(%s, %s)" % (idx, x)
        if op in ("batch_norm", "batch_norm1d"):
            c = sh[1]
            # running statistics: buffers, not trained (check)
            rm = self.new_input((c,), 0.0, buffer=True)
            rv = self.new_input((c,), "pos", buffer=True)
            training = r.random() < 0.5 and all(
                d > 1 for i, d in enumerate(sh) if i != 1)
            return "F.batch_norm(%s, %s, %s, training=%s, momentum=0.3)" % (
                x, rm, rv, training)
        if op in ("conv2d", "conv_transpose2d"):
            k = r.randint(1, min(3, sh[2], sh[3]))
            cout = r.randint(1, 4)
            wshape = (cout, sh[1], k, k) if op == "conv2d" else \
                (sh[1], cout, k, k)
            w = self.new_input(wshape, 0.0)
            return "F.%s(%s, %s, stride=%d, padding=%d)" % (
                op, x, w, r.randint(1, 2), r.randint(0, k - 1))
        if op == "conv1d":
            k = r.randint(1, min(3, sh[2]))
            w = self.new_input((r.randint(1, 4), sh[1], k), 0.0)
            return "F.conv1d(%s, %s, padding=%d)" % (x, w, r.randint(0, k - 1))
        if op == "max_pool2d":
            return "F.max_pool2d(%s, %d)" % (x, r.randint(1, 2))
        if op == "max_pool1d":
            return "F.max_pool1d(%s, %d)" % (x, r.randint(1, 2))
        if op == "avg_pool2d":
            return "F.avg_pool2d(%s, %d, ceil_mode=%s)" % (
                x, r.randint(1, 2), r.random() < 0.3)
        if op == "adaptive_avg":
            return "F.adaptive_avg_pool2d(%s, %d)" % (x, r.randint(1, 2))
        if op == "interpolate":
            return "F.interpolate(%s, scale_factor=2, mode=%r)" % (
                x, r.choice(["nearest", "bilinear"]))
        if op == "group_norm":
            return "F.group_norm(%s, 1)" % x
        return None

    def arguments_made(self):
        """Called when the program's first arguments exist."""

    TEMPLATES = [("t_unary", 4), ("t_binary", 4), ("t_reduce", 3),
                 ("t_view", 4), ("t_inplace", 2), ("t_index", 2),
                 ("t_matmul", 1), ("t_break", 1), ("t_nn", 3)]

    def program(self):
        r = self.rng
        for _ in range(r.randint(1, 3)):
            self.new_input()
        self.arguments_made()
        names = [n for n, w in self.TEMPLATES for _ in range(w)]
        n_ops = r.randint(3, 14)
        made = 0
        tries = 0
        while made < n_ops and tries < n_ops * 10:
            tries += 1
            if r.random() < 0.05:
                self.new_input()
            e = getattr(self, r.choice(names))()
            if e is None:
                continue
            if isinstance(e, tuple) and e[0] == "done":
                # (a template that emitted its own statements)
                made += e[1]
                continue
            if isinstance(e, tuple):
                if self.emit(e[1], inplace=True):
                    made += 1
                continue
            if self.emit(e) is not None:
                made += 1
        vals = [n for n in self.env if n.startswith("v")]
        if not vals:
            vals = [self.inputs[0][0]]
        outs = r.sample(vals, min(len(vals), r.randint(1, 3)))
        if vals[-1] not in outs:
            outs.append(vals[-1])
        return self.source(outs), [t for _, t in self.inputs]

    def body(self, indent):
        """The statements, indented (a statement may have several lines)."""
        return "\n".join(indent + l for s in self.lines
                         for l in s.split("\n"))

    def source(self, outs):
        args = ", ".join(n for n, _ in self.inputs)
        return "def prog(%s):\n%s\n    return (%s,)\n" % (
            args, self.body("    ") or "    pass", ", ".join(outs))


def _broadcasts(a, b):
    """a broadcasts to b without changing b's shape."""
    if len(a) > len(b):
        return False
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1:
            return False
    return True


def generate(seed, mode="infer"):
    return Gen(seed, mode).program()


def _compile_src(src):
    ns = {"torch": torch, "F": F}
    exec(compile(src, "<program_fuzz>", "exec"), ns)
    return ns["prog"]


def _close(a, b, what):
    if isinstance(a, (tuple, list)):
        if not isinstance(b, (tuple, list)) or len(a) != len(b):
            return "%s: structure %r vs %r" % (what, type(a), type(b))
        for i, (x, y) in enumerate(zip(a, b)):
            m = _close(x, y, "%s[%d]" % (what, i))
            if m:
                return m
        return None
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor):
            return "%s: tensor vs %r" % (what, type(b))
        if a.dtype != b.dtype or a.shape != b.shape:
            return "%s: %s %s vs eager %s %s" % (
                what, a.dtype, tuple(a.shape), b.dtype, tuple(b.shape))
        if a.dtype in FLOAT:
            scale = max(1.0, b.detach().abs().max().item()) if b.numel() \
                else 1.0
            ok = torch.allclose(a.detach(), b.detach(), rtol=1e-3,
                                atol=1e-4 * scale, equal_nan=True)
        else:
            ok = torch.equal(a, b)
        if not ok:
            diff = ((a.detach().double() - b.detach().double()).abs().max()
                    .item() if a.numel() else 0)
            return "%s: values differ (max %g)" % (what, diff)
        return None
    if a != b:
        return "%s: %r vs %r" % (what, a, b)
    return None


STATS = {}


def _count(what):
    STATS[what] = STATS.get(what, 0) + 1


def check(src, inputs, backend="cpu", mode="infer", dynamic=None,
          alias=False, twice=False):
    """None when kiln agrees with eager (or eager fails, or kiln refuses
    cleanly), else a message. `alias`: inputs of one shape and dtype are
    passed as one tensor (a0 and a1 the same object); `twice`: the compiled
    function is called on a first set of inputs, then checked on the
    second (its cache, replay and guards)."""
    import kiln
    fn = _compile_src(src)
    e_in = [t.clone() for t in inputs]
    k_in = [t.clone() for t in inputs]
    if alias:
        for ins in (e_in, k_in):
            for i in range(len(ins)):
                for j in range(i):
                    if ins[j].shape == ins[i].shape and \
                            ins[j].dtype == ins[i].dtype:
                        ins[i] = ins[j]
                        break
    if mode == "train":
        for i, t in enumerate(inputs):
            if t.dtype in FLOAT and not getattr(t, "kiln_fuzz_buffer",
                                                False):
                e_in[i].requires_grad_(True)
                k_in[i].requires_grad_(True)
    try:
        want = fn(*e_in)
        if mode == "train":
            loss = _loss(want)
            if loss is None:
                _count("no loss")
                return None
            loss.backward()
    except Exception:
        _count("eager failed")
        return None
    try:
        c = kiln.compile(fn, backend=backend, dynamic=dynamic)
        if twice:
            first = [t.clone() * 0.5 + 0.25 if t.dtype in FLOAT
                     else t.clone() for t in inputs]
            try:
                fn(*[t.clone() for t in first])
            except Exception:
                # (the other values make the program invalid: a size read
                # from data, an index past it)
                _count("eager failed on the first call's values")
                return None
            if mode == "train":
                for t, t0 in zip(first, inputs):
                    if t.dtype in FLOAT and not getattr(
                            t0, "kiln_fuzz_buffer", False):
                        t.requires_grad_(True)
            c(*first)
        got = c(*k_in)
        if mode == "train":
            loss = _loss(got)
            loss.backward()
    except kiln.Unsupported as ex:
        _count("unsupported: " + str(ex).splitlines()[0][:80])
        return None
    except Exception as ex:
        return "kiln raised %s: %s" % (type(ex).__name__,
                                      str(ex).splitlines()[0][:300]
                                      if str(ex) else "")
    _count("compared")
    found = _compare(got, want, k_in, e_in, mode)
    if found and "values differ" in found:
        # An ill-conditioned value (a norm of nearly equal numbers): kiln
        # passes when its error against a float64 run is no worse than 3x
        # eager's (torch._dynamo's same() rule), value by value.
        ref = _float64_run(fn, inputs, e_in, mode)
        if ref is not None and _no_worse(got, want, k_in, e_in, ref, mode):
            _count("compared (float64 rule)")
            return None
    return found


def _compare(got, want, k_in, e_in, mode):
    m = _close(got, want, "result")
    if m:
        return m
    for i, (a, b) in enumerate(zip(k_in, e_in)):
        m = _close(a.detach(), b.detach(), "input a%d after the call" % i)
        if m:
            return m
        if mode == "train" and b.requires_grad:
            if (a.grad is None) != (b.grad is None):
                return "a%d.grad: %s vs eager %s" % (
                    i, a.grad is None and "None" or "tensor",
                    b.grad is None and "None" or "tensor")
            if b.grad is not None:
                m = _close(a.grad, b.grad, "a%d.grad" % i)
                if m:
                    return m
    return None


def _float64_run(fn, inputs, e_in, mode):
    ins = [t.clone().double() if t.dtype == torch.float32 else t.clone()
           for t in inputs]
    for t, e in zip(ins, e_in):
        if e.requires_grad:
            t.requires_grad_(True)
    try:
        out = fn(*ins)
        if mode == "train":
            _loss(out).backward()
    except Exception:
        return None
    return out, ins


def _leaves(out, ins, mode):
    vals = [o for o in (out if isinstance(out, (tuple, list)) else (out,))]
    vals += [t.detach() for t in ins]
    if mode == "train":
        vals += [t.grad for t in ins if t.grad is not None]
    return vals


def _no_worse(got, want, k_in, e_in, ref, mode):
    ks = _leaves(got, k_in, mode)
    es = _leaves(want, e_in, mode)
    rs = _leaves(ref[0], ref[1], mode)
    if not len(ks) == len(es) == len(rs):
        return False
    return all(no_worse_than_eager(k, e, r) for k, e, r in zip(ks, es, rs))


def no_worse_than_eager(k, e, r):
    """kiln's value k is no further from the float64 value r than 3x eager's
    value e (plus 1e-5 of r's scale); non-float values pass."""
    if not isinstance(k, torch.Tensor) or k.dtype not in FLOAT or \
            not k.numel():
        return True
    r = r.detach().double()
    ek = (k.detach().double() - r).abs().max().item()
    ee = (e.detach().double() - r).abs().max().item()
    return ek <= 3 * ee + 1e-5 * max(1.0, r.abs().max().item())


def _loss(out):
    fs = [o for o in out if isinstance(o, torch.Tensor) and o.dtype in FLOAT
          and o.requires_grad]
    if not fs:
        return None
    total = 0
    for i, o in enumerate(fs):
        total = total + (o * (i + 1.5)).sum()
    return total


def _seeds(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def arguments(doc):
    """The options every Python fuzzer takes (module_fuzz adds its own)."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--seeds", default="0-99")
    p.add_argument("--mode", default="infer", choices=["infer", "train"])
    p.add_argument("--backend", default="cpu")
    p.add_argument("--dynamic", action="store_true",
                   help="kiln.compile(dynamic=True)")
    p.add_argument("--show", action="store_true",
                   help="print each program")
    return p


def main():
    p = arguments(__doc__)
    p.add_argument("--alias", action="store_true",
                   help="inputs of one shape and dtype passed as one tensor")
    p.add_argument("--twice", action="store_true",
                   help="call once on other values first")
    a = p.parse_args()
    bad = 0
    for s in _seeds(a.seeds):
        try:
            src, inputs = generate(s, a.mode)
        except Exception:
            bad += 1
            print("FINDING seed %d: the generator failed (a generator bug)"
                  "\n%s" % (s, traceback.format_exc()), flush=True)
            continue
        if a.show:
            print("# seed %d\n%s" % (s, src))
        try:
            m = check(src, inputs, a.backend, a.mode,
                      True if a.dynamic else None, a.alias, a.twice)
        except Exception:
            m = "checker crashed: " + traceback.format_exc()
        if m:
            bad += 1
            print("FINDING seed %d (%s, %s): %s\n%s" % (s, a.mode, a.backend,
                                                      m, src), flush=True)
    for k, v in sorted(STATS.items(), key=lambda kv: -kv[1]):
        print("%6d %s" % (v, k))
    print("%d findings" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
