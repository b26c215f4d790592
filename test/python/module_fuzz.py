"""Random `torch.nn.Module` programs through kiln.compile against eager
PyTorch: program_fuzz's statements inside a module's `forward`, with real
layers (`nn.Linear`, `Conv2d`, `BatchNorm1d/2d` with random running
statistics and `momentum=None`, `LayerNorm`, activations (one in place),
`Sequential` blocks, `ModuleList` loops with residuals,
`MultiheadAttention`, `TransformerEncoderLayer`, `Conv1d`, `Embedding`,
pooling), parameters and buffers of the module used directly, buffers
written by `forward`, and `self.training` deciding a value.

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m0 = torch.nn.Linear(5, 3)
            self.register_buffer('b1', torch.zeros((), dtype=torch.float32))
        def forward(self, a0):
            v0 = self.m0(a0)
            self.b1.add_(v0.detach().float().mean())
            ...

`check(...)` builds the module twice from the source with the same state
(`load_state_dict`), compiles one with `kiln.compile(model)` and compares
with eager, step by step:

* `infer`: under `torch.no_grad()`, a call in train mode, one in eval
  mode and one in train mode again (`model.train()` / `model.eval()` on
  the compiled module): results, inputs after each call, every parameter
  and buffer after each call.
* `train`: three SGD steps (momentum 0.9, lr 0.002) on each model:
  forward, a loss over the float results, backward, `opt.step()`,
  `zero_grad()` (the float inputs require grad; a module without
  parameters has no optimizer); the results of each step, the gradients of
  the first (parameters and inputs), every parameter and buffer after the
  last. With `--whole-step` (or one seed in three, chosen
  from the seed) the compiled function is the whole step (forward,
  backward and `opt.step()` in one `kiln.compile`d function), else only
  the model.

A value mismatch passes when kiln's error against a float64 run of the same
steps is no worse than 3x eager's (program_fuzz's rule).

    KILN_BUILD_DIR=$PWD/build PYTHONPATH=python KILN_CACHE_DIR=off \\
      /usr/bin/python3 test/python/module_fuzz.py --seeds 0-99 --mode train
"""

import random
import sys
import traceback

import torch
import torch.nn.functional as F

import program_fuzz as pf
from program_fuzz import FLOAT

_ACTS = ["torch.nn.ReLU()", "torch.nn.GELU()", "torch.nn.SiLU()",
         "torch.nn.Tanh()", "torch.nn.Sigmoid()", "torch.nn.LeakyReLU(0.1)",
         "torch.nn.Hardswish()", "torch.nn.ELU()", "torch.nn.Softplus()",
         "torch.nn.ReLU(inplace=True)"]


class ModuleGen(pf.Gen):
    """program_fuzz's generator writing a module: the first inputs are
    `forward`'s arguments, weights and running statistics the templates
    ask for later are the module's parameters and buffers, and layers are
    submodules."""

    def __init__(self, seed, mode):
        super().__init__(seed, mode)
        torch.manual_seed(seed)   # the layers' initial values
        self.mod = torch.nn.Module()
        self.in_body = False
        self.n_attr = 0
        self.init_lines = []      # __init__'s statements
        self.state = {}           # the module's initial state_dict

    def names(self):
        return dict(super().names(), self=self.mod)

    def _attr(self, prefix):
        name = "%s%d" % (prefix, self.n_attr)
        self.n_attr += 1
        return name

    def new_input(self, shape=None, kind=None, high=None, buffer=False):
        name = super().new_input(shape, kind, high, buffer)
        if not self.in_body:
            return name
        _, t = self.inputs.pop()
        del self.env[name]
        dt = str(t.dtype)
        if t.dtype in FLOAT and not buffer:
            attr = self._attr("p")
            setattr(self.mod, attr, torch.nn.Parameter(t.clone()))
            self.init_lines.append(
                "self.%s = torch.nn.Parameter(torch.zeros(%r, dtype=%s))"
                % (attr, tuple(t.shape), dt))
        else:
            attr = self._attr("b")
            self.mod.register_buffer(attr, t.clone())
            self.init_lines.append(
                "self.register_buffer(%r, torch.zeros(%r, dtype=%s))"
                % (attr, tuple(t.shape), dt))
        self.state[attr] = t.clone()
        return "self." + attr

    def emit(self, expr, inplace=False):
        # (a statement that fails part way must not leave the module's
        # buffers written either)
        saved = {k: v.clone() for k, v in self.mod.state_dict().items()}
        out = super().emit(expr, inplace)
        if out is None:
            with torch.no_grad():
                for k, v in self.mod.state_dict().items():
                    v.copy_(saved[k])
        return out

    # ----- module templates

    def _randomize(self, layer):
        """Random running statistics and affine parameters: with the
        defaults (0, 1, 1, 0) an eval-mode BatchNorm tests nothing."""
        with torch.no_grad():
            for m in layer.modules():
                if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 1.5)
                if isinstance(m, (torch.nn.modules.batchnorm._BatchNorm,
                                  torch.nn.LayerNorm, torch.nn.GroupNorm)) \
                        and \
                        m.weight is not None:
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)

    def layer(self, ctor, call):
        """Adds the submodule `ctor` and emits `call` (`{m}` the module,
        `{x}`... filled by the caller); drops the submodule when eager
        refuses the call."""
        attr = self._attr("m")
        try:
            layer = eval(ctor, {"torch": torch})
        except Exception:
            return ("done", 0)
        self._randomize(layer)
        # (the initial state: the call below updates running statistics)
        state = {"%s.%s" % (attr, k): v.clone()
                 for k, v in layer.state_dict().items()}
        self.mod.add_module(attr, layer)
        if self.emit(call.format(m="self." + attr)) is None:
            delattr(self.mod, attr)
            return ("done", 0)
        self.init_lines.append("self.%s = %s" % (attr, ctor))
        self.state.update(state)
        return ("done", 1)

    def t_layer(self):
        r = self.rng
        x = self.pick(lambda v: v.dtype == torch.float32 and v.ndim >= 1
                      and v.numel() > 0)
        if x is None:
            return None
        sh = self.env[x].shape
        f = sh[-1]
        opts = ["linear", "mlp", "layer_norm", "act", "dropout0", "list",
                "prelu", "softmax", "flatten"]
        if f % 2 == 0:
            opts += ["glu"]
        if len(sh) == 2:
            opts += ["bn1d", "embedding"]
        if len(sh) == 3:
            opts += ["conv1d", "rnn"]
            if f % 2 == 0:
                opts += ["mha", "encoder"]
        if len(sh) == 4:
            opts += ["conv", "bn2d", "conv_block", "pool", "group_norm",
                     "conv_t", "upsample"]
        op = r.choice(opts)
        call = "{m}(%s)" % x
        h = r.randint(1, 6)
        if op == "linear":
            ctor = "torch.nn.Linear(%d, %d, bias=%s)" % (f, h, r.random() < 0.8)
        elif op == "mlp":
            ctor = "torch.nn.Sequential(torch.nn.Linear(%d, %d), %s, " \
                "torch.nn.Linear(%d, %d))" % (f, h, r.choice(_ACTS), h, f)
        elif op == "layer_norm":
            ctor = "torch.nn.LayerNorm(%d, elementwise_affine=%s)" % (
                f, r.random() < 0.7)
        elif op == "act":
            ctor = r.choice(_ACTS)
            if "inplace" in ctor:
                # (in place on a value of its own: eager refuses a leaf)
                call = "{m}(%s * 1.0)" % x
        elif op == "dropout0":
            ctor = "torch.nn.Dropout(0.0)"
        elif op == "list":
            # a ModuleList loop with a residual: the same layer kind n times
            n = r.randint(1, 3)
            ctor = "torch.nn.ModuleList([torch.nn.Linear(%d, %d) for _ in " \
                "range(%d)])" % (f, f, n)
            act = r.choice(["torch.relu", "torch.tanh", "F.gelu"])
            name = "v%d" % self.counter
            stmt = "%s = %s * 1.0\nfor _l in {m}:\n    %s = %s + %s(_l(%s))" \
                % (name, x, name, name, act, name)
            return self.layer_stmt(ctor, stmt, name)
        elif op == "bn1d":
            ctor = "torch.nn.BatchNorm1d(%d, momentum=%s)" % (
                sh[1], r.choice(["0.1", "None", "0.5"]))
        elif op == "bn2d":
            ctor = "torch.nn.BatchNorm2d(%d, momentum=%s, affine=%s)" % (
                sh[1], r.choice(["0.1", "None"]), r.random() < 0.8)
        elif op == "conv":
            c = sh[1]
            g = r.choice([g for g in (1, 2, c) if c % g == 0])
            k = r.randint(1, min(3, sh[2], sh[3]))
            ctor = "torch.nn.Conv2d(%d, %d, %d, stride=%d, padding=%d, " \
                "groups=%d, bias=%s)" % (c, g * r.randint(1, 2), k,
                                         r.randint(1, 2), r.randint(0, k - 1),
                                         g, r.random() < 0.7)
        elif op == "conv_block":
            c = sh[1]
            ctor = "torch.nn.Sequential(torch.nn.Conv2d(%d, %d, 3, padding=1, " \
                "bias=False), torch.nn.BatchNorm2d(%d), " \
                "torch.nn.ReLU(inplace=True))" % (c, h, h)
        elif op == "pool":
            ctor = r.choice(["torch.nn.MaxPool2d(2)", "torch.nn.AvgPool2d(2)",
                             "torch.nn.AdaptiveAvgPool2d(1)",
                             "torch.nn.AdaptiveAvgPool2d((1, 2))"])
        elif op == "conv1d":
            k = r.randint(1, min(3, sh[2]))
            ctor = "torch.nn.Conv1d(%d, %d, %d, padding=%d)" % (
                sh[1], h, k, r.randint(0, k - 1))
        elif op == "mha":
            ctor = "torch.nn.MultiheadAttention(%d, %d, batch_first=True)" % (
                f, r.choice([1, 2]))
            call = r.choice(["{m}(%s, %s, %s)[0]" % (x, x, x),
                             "{m}(%s, %s, %s, need_weights=False)[0]"
                             % (x, x, x)])
        elif op == "prelu":
            ctor = r.choice(["torch.nn.PReLU()",
                             "torch.nn.PReLU(%d)" % sh[1] if len(sh) >= 2
                             else "torch.nn.PReLU()"])
        elif op == "softmax":
            ctor = r.choice(["torch.nn.Softmax(dim=-1)",
                             "torch.nn.LogSoftmax(dim=%d)" % (len(sh) - 1),
                             "torch.nn.Softmin(dim=0)"])
        elif op == "flatten":
            ctor = "torch.nn.Flatten(%d)" % r.randint(0, len(sh) - 1)
        elif op == "glu":
            ctor = "torch.nn.GLU()"
        elif op == "embedding":
            # (the rows a float value's shape gives: indices are a buffer
            # of the module; the embedding's output feeds later statements)
            idx = self.new_input((r.randint(1, 4),), high=sh[0])
            ctor = "torch.nn.Embedding(%d, %d, padding_idx=%s)" % (
                sh[0], h, r.choice(["None", "0"]))
            call = "{m}(%s) * %s.sum()" % (idx, x)
        elif op == "rnn":
            ctor = "torch.nn.%s(%d, %d, num_layers=%d, batch_first=True, " \
                "bidirectional=%s)" % (r.choice(["LSTM", "GRU", "RNN"]), f, h,
                                       r.randint(1, 2), r.random() < 0.3)
            call = "{m}(%s)[0]" % x
        elif op == "group_norm":
            c = sh[1]
            g = r.choice([g for g in (1, 2, c) if c % g == 0])
            ctor = "torch.nn.GroupNorm(%d, %d, affine=%s)" % (
                g, c, r.random() < 0.8)
        elif op == "conv_t":
            k = r.randint(1, 3)
            s_ = r.randint(1, 2)
            ctor = "torch.nn.ConvTranspose2d(%d, %d, %d, stride=%d, " \
                "padding=%d, output_padding=%d, bias=%s)" % (
                    sh[1], h, k, s_, r.randint(0, k - 1),
                    r.randint(0, s_ - 1), r.random() < 0.7)
        elif op == "upsample":
            ctor = r.choice(["torch.nn.Upsample(scale_factor=2)",
                             "torch.nn.Upsample(scale_factor=2, "
                             "mode='bilinear', align_corners=False)",
                             "torch.nn.Upsample(scale_factor=2, "
                             "mode='bilinear', align_corners=True)",
                             "torch.nn.PixelShuffle(1)"])
        elif op == "encoder":
            ctor = "torch.nn.TransformerEncoderLayer(%d, %d, " \
                "dim_feedforward=%d, dropout=0.0, batch_first=True, " \
                "norm_first=%s)" % (f, r.choice([1, 2]), h, r.random() < 0.5)
        else:
            return None
        return self.layer(ctor, call)

    def layer_stmt(self, ctor, stmt, name):
        """`layer` for a statement that binds `name`."""
        attr = self._attr("m")
        layer = eval(ctor, {"torch": torch})
        state = {"%s.%s" % (attr, k): v.clone()
                 for k, v in layer.state_dict().items()}
        self.mod.add_module(attr, layer)
        env = dict(self.env, **self.names())
        try:
            exec(stmt.format(m="self." + attr), env)
        except Exception:
            delattr(self.mod, attr)
            return ("done", 0)
        self.counter += 1
        self.env[name] = env[name]
        self.lines.append(stmt.format(m="self." + attr))
        self.init_lines.append("self.%s = %s" % (attr, ctor))
        self.state.update(state)
        return ("done", 1)

    def t_mode(self):
        """A value that depends on the module's training flag."""
        x = self.pick(self.fl)
        if x is None:
            return None
        return self.rng.choice([
            "({x} * 2 if self.training else {x} - 1)",
            "(torch.relu({x}) if not self.training else {x}.abs())"]).format(
                x=x)

    def t_buffer(self):
        """A buffer written by forward (a counter, a running mean), read
        after the write."""
        x = self.pick(self.fl)
        if x is None:
            return None
        b = self.new_input((), 0.0, buffer=True)
        stmt = self.rng.choice([
            "%s.add_(%s.detach().float().mean())",
            "%s.mul_(0.9).add_(0.1 * %s.detach().float().sum())",
            "%s.copy_(%s.detach().float().amax())"]) % (b, x)
        if not self.emit(stmt, inplace=True):
            return ("done", 0)
        y = self.pick(self.fl)
        return ("done", 1 + (self.emit("%s * %s" % (y, b)) is not None))

    def t_scalar(self):
        """A Python number attribute of the module (the harness changes it
        between calls: a guard on the module's attribute)."""
        x = self.pick(self.fl)
        if x is None:
            return None
        attr = self._attr("s")
        v = round(self.rng.uniform(0.2, 2.0), 3)
        setattr(self.mod, attr, v)
        e = self.emit(self.rng.choice(["{x} * self.{a}", "{x} + self.{a}",
                                       "F.leaky_relu({x}, self.{a} / 4)"])
                      .format(x=x, a=attr))
        if e is None:
            delattr(self.mod, attr)
            return ("done", 0)
        self.init_lines.append("self.%s = %r" % (attr, v))
        return ("done", 1)

    def t_reuse(self):
        """A layer called again (its parameters used twice: gradients add
        up), or tied to a new layer of the same shape (one Parameter in two
        modules: the optimizer sees it once)."""
        lins = [n for n, m in self.mod.named_children()
                if isinstance(m, torch.nn.Linear)]
        if not lins:
            return None
        name = self.rng.choice(lins)
        lin = getattr(self.mod, name)
        x = self.pick(lambda v: v.dtype == torch.float32 and v.ndim >= 1
                      and v.shape[-1] == lin.in_features)
        if x is None:
            return None
        if self.rng.random() < 0.5:
            return ("done", int(self.emit("self.%s(%s)" % (name, x))
                                is not None))
        ctor = "torch.nn.Linear(%d, %d, bias=%s)" % (
            lin.in_features, lin.out_features, lin.bias is not None)
        attr = self._attr("m")
        twin = eval(ctor, {"torch": torch})
        twin.weight = lin.weight
        self.mod.add_module(attr, twin)
        if self.emit("self.%s(%s)" % (attr, x)) is None:
            delattr(self.mod, attr)
            return ("done", 0)
        self.init_lines.append("self.%s = %s" % (attr, ctor))
        self.init_lines.append("self.%s.weight = self.%s.weight"
                               % (attr, name))
        # (the built module's state_dict names the tied weight twice)
        self.state["%s.weight" % attr] = self.state["%s.weight" % name].clone()
        if lin.bias is not None:
            self.state["%s.bias" % attr] = twin.bias.detach().clone()
        return ("done", 1)

    def t_param_write(self):
        """forward writes a parameter under no_grad (a weight clamp, a
        renormalization), then uses it."""
        ps = [n for n, p in self.mod.named_parameters()]
        if not ps:
            return None
        name = self.rng.choice(ps)
        stmt = "with torch.no_grad():\n    self.%s.%s" % (
            name, self.rng.choice(["clamp_(-0.5, 0.5)", "mul_(0.9)",
                                   "div_(self.%s.norm() + 1)" % name]))
        return ("stmt", stmt)

    def t_store(self):
        """forward keeps a value in a Python list or dict attribute (a
        module keeping its activations, a hook-style dict): the harness
        compares what each call stored."""
        x = self.pick(self.fl)
        if x is None:
            return None
        if not hasattr(self.mod, "kept"):
            self.mod.kept = []
            self.mod.kept_d = {}
            self.init_lines += ["self.kept = []", "self.kept_d = {}"]
        return ("stmt", self.rng.choice([
            "self.kept.append(%s.detach() * 1.0)",
            "self.kept.append(%s)",
            "self.kept_d['v%d'] = (%%s * 2, %%s.sum())" % self.counter,
        ]).replace("%s", x))

    TEMPLATES = pf.Gen.TEMPLATES + [("t_layer", 6), ("t_mode", 1),
                                    ("t_buffer", 1), ("t_scalar", 1),
                                    ("t_reuse", 1), ("t_param_write", 1),
                                    ("t_store", 1)]

    def arguments_made(self):
        # (inputs made after forward's arguments are parameters, buffers)
        self.in_body = True

    def source(self, outs):
        args = ", ".join(n for n, _ in self.inputs)
        init = "\n".join("        " + l for l in self.init_lines)
        return ("class M(torch.nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n%s\n"
                "    def forward(self, %s):\n%s\n"
                "        return (%s,)\n") % (
                    init, args, self.body("        ") or "        pass",
                    ", ".join(outs))


def generate(seed, mode="infer"):
    """(source, initial state_dict, forward's example inputs)"""
    g = ModuleGen(seed, mode)
    # (without autograd: the layers' parameters require grad, and a
    # statement eager accepts without grad may be one autograd refuses, a
    # write to a view of a split; the check runs the program with grad)
    with torch.no_grad():
        src, inputs = g.program()
    return src, g.state, inputs


def build(src, state, double=False):
    ns = {"torch": torch, "F": F}
    exec(compile(src, "<module_fuzz>", "exec"), ns)
    m = ns["M"]()
    m.load_state_dict({k: v.clone() for k, v in state.items()})
    return m.double() if double else m


# The training scenarios: an optimizer and what the step does besides
# forward, backward and `opt.step()` (`clip`: clip_grad_norm_ between
# backward and step; `sched`: a StepLR halving lr after every step;
# `keep_grads`: zero_grad(set_to_none=False)). (Small learning rates: the
# loss is a weighted sum, its gradients large; a big step makes the next
# steps chaotic, rounding differences grow. Adam-style eps 1e-3: with 1e-8
# a gradient that is rounding noise, 1e-5 where the true one is 0 (a
# layer_norm over one element), moves a parameter by lr either way: seed
# 53037 with eps 1e-6.)
OPTIMIZERS = {
    "sgd": "torch.optim.SGD(ps, lr=0.002, momentum=0.9)",
    "sgd_plain": "torch.optim.SGD(ps, lr=0.002)",
    "sgd_nesterov": "torch.optim.SGD(ps, lr=0.002, momentum=0.9, "
                    "nesterov=True, weight_decay=0.01)",
    "adam": "torch.optim.Adam(ps, lr=0.002, eps=1e-3)",
    "adamw": "torch.optim.AdamW(ps, lr=0.002, weight_decay=0.05, eps=1e-3)",
    "rmsprop": "torch.optim.RMSprop(ps, lr=0.0005, eps=1e-3)",
}
EXTRAS = ("clip", "sched", "keep_grads")


def scenario(seed):
    """The seed's training scenario: (optimizer, extras); half of the
    seeds keep the first runs' scenario (SGD with momentum, no extras)."""
    r = random.Random(seed * 7919 + 17)
    if r.random() < 0.5:
        return "sgd", ()
    return (r.choice(sorted(OPTIMIZERS)),
            tuple(e for e in EXTRAS if r.random() < 0.35))


def _optimizer(m, kind):
    ps = list(m.parameters())
    return eval(OPTIMIZERS[kind], {"torch": torch, "ps": ps}) if ps else None


def _snap(v):
    """A copy of the values now: a result that is a view of an input (eager
    returns the view, kiln a new tensor: docs/python.md, "Limits") would
    otherwise show the later calls' writes to that input."""
    if isinstance(v, (tuple, list)):
        return type(v)(_snap(x) for x in v)
    return v.detach().clone() if isinstance(v, torch.Tensor) else v


def _kept(model):
    """What forward stored in its `kept` list and `kept_d` dict so far."""
    return _snap(list(getattr(model, "kept", [])) +
                 [v for _, v in sorted(getattr(model, "kept_d", {}).items())])


def _change_scalars(model):
    """The module's number attributes (`self.s3 = 0.5`) changed, as a user
    changes a hyperparameter between calls: the compiled module must see
    the new value (a guard fails, a recompile), not keep the old one."""
    for k, v in list(vars(model).items()):
        if k[:1] == "s" and k[1:].isdigit() and isinstance(v, float):
            setattr(model, k, round(v * 1.5, 3))


def run(model, inputs, mode, compiled=None, whole_step=False, steps=3,
        train=("sgd", ())):
    """The scenario on one model: a list of (what, value) leaves to
    compare (results per call, inputs after each call, gradients, the
    module's state after each call). `compiled(model)` wraps the model (or
    the whole training step) when given."""
    leaves = []
    ins = [t.clone() for t in inputs]
    if mode == "infer":
        fwd = compiled(model) if compiled else model
        for i, training in enumerate((True, False, True)):
            if i == 2:
                _change_scalars(model)
            fwd.train(training)
            with torch.no_grad():
                out = fwd(*ins)
            leaves.append(("call %d result" % i, _snap(out)))
            leaves.append(("call %d kept" % i, _kept(model)))
            leaves += [("call %d input a%d" % (i, j), _snap(t))
                       for j, t in enumerate(ins)]
            leaves += [("call %d %s" % (i, k), _snap(v))
                       for k, v in model.state_dict().items()]
        return leaves
    # (a module without parameters has no optimizer: its steps are forward
    # and backward; the float inputs require grad, their gradients are
    # compared too)
    kind, extras = train
    opt = _optimizer(model, kind)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, 0.5) \
        if opt is not None and "sched" in extras else None
    for t in ins:
        if t.dtype in FLOAT:
            t.requires_grad_(True)

    fwd = compiled(model) if compiled and not whole_step else model

    def step(*xs):
        out = fwd(*xs)
        loss = pf._loss(out)
        if loss is not None:
            loss.backward()
            if "clip" in extras:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if opt is not None:
                opt.step()
        return out, loss

    if compiled and whole_step:
        step = compiled(step)
    model.train()
    for i in range(steps):
        if i == 2:
            _change_scalars(model)
        out, loss = step(*ins)
        leaves.append(("step %d result" % i, _snap(out)))
        leaves.append(("step %d kept" % i, _kept(model)))
        if i == 0:
            leaves += [("step 0 grad %s" % k, _snap(p.grad))
                       for k, p in model.named_parameters()]
            leaves += [("step 0 grad a%d" % j, _snap(t.grad))
                       for j, t in enumerate(ins) if t.requires_grad]
        if sched is not None:
            sched.step()
        if opt is not None:
            opt.zero_grad(set_to_none="keep_grads" not in extras)
        for t in ins:
            t.grad = None
    leaves += [("input a%d" % j, _snap(t)) for j, t in enumerate(ins)]
    leaves += [(k, v) for k, v in model.state_dict().items()]
    return leaves


def check(src, state, inputs, backend="cpu", mode="infer", dynamic=None,
          whole_step=False, train=("sgd", ())):
    """None when kiln agrees with eager (or eager fails, or kiln refuses
    cleanly), else a message."""
    import kiln
    try:
        want = run(build(src, state), inputs, mode, whole_step=whole_step,
                   train=train)
    except Exception as ex:
        pf._count("eager failed: %s" % str(ex).splitlines()[0][:70]
                  if str(ex) else "eager failed")
        return None
    try:
        got = run(build(src, state), inputs, mode,
                  lambda f: kiln.compile(f, backend=backend, dynamic=dynamic),
                  whole_step, train=train)
    except kiln.Unsupported as ex:
        pf._count("unsupported: " + str(ex).splitlines()[0][:80])
        return None
    except Exception as ex:
        return "kiln raised %s: %s" % (type(ex).__name__,
                                      str(ex).splitlines()[0][:300]
                                      if str(ex) else "")
    pf._count("compared")
    if len(got) != len(want):
        return "%d leaves vs eager %d" % (len(got), len(want))
    found = None
    for (what, g), (_, w) in zip(got, want):
        if (g is None) != (w is None):
            return "%s: %s vs eager %s" % (what, g is None and "None" or
                                          "a value", w is None and "None"
                                          or "a value")
        if g is None:
            continue
        found = pf._close(g, w, what)
        if found:
            break
    if found and "values differ" in found:
        try:
            ref = run(build(src, state, double=True),
                      [t.double() if t.dtype == torch.float32 else t
                       for t in inputs], mode, whole_step=whole_step,
                      train=train)
        except Exception:
            return found
        if _no_worse(got, want, ref):
            pf._count("compared (float64 rule)")
            return None
    return found


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [x for e in v for x in _flat(e)]
    return [v] if isinstance(v, torch.Tensor) else []


def _no_worse(got, want, ref):
    for (_, k), (_, e), (_, r) in zip(got, want, ref):
        ks, es, rs = _flat(k), _flat(e), _flat(r)
        if not len(ks) == len(es) == len(rs):
            return False
        if not all(pf.no_worse_than_eager(a, b, c)
                   for a, b, c in zip(ks, es, rs)):
            return False
    return True


def main():
    p = pf.arguments(__doc__)
    p.add_argument("--whole-step", choices=["seed", "yes", "no"],
                   default="seed", help="train: compile the whole step "
                   "(forward, backward, opt.step()); 'seed': one seed in 3")
    p.add_argument("--optimizer", choices=["seed"] + sorted(OPTIMIZERS),
                   default="seed", help="train: the optimizer ('seed': "
                   "chosen from the seed with the extras, see scenario())")
    p.add_argument("--extras", default="", help="train, with --optimizer: "
                   "comma-separated from %s" % ", ".join(EXTRAS))
    a = p.parse_args()
    bad = 0
    for s in pf._seeds(a.seeds):
        try:
            src, state, inputs = generate(s, a.mode)
        except Exception:
            bad += 1
            print("FINDING seed %d: the generator failed (a generator bug)"
                  "\n%s" % (s, traceback.format_exc()), flush=True)
            continue
        whole = a.whole_step == "yes" or (a.whole_step == "seed" and
                                          random.Random(s).random() < 1 / 3)
        train = scenario(s) if a.optimizer == "seed" else \
            (a.optimizer, tuple(e for e in a.extras.split(",") if e))
        what = "%s%s" % (", whole step" if whole else "",
                         ", %s %s" % (train[0], "+".join(train[1]))
                         if a.mode == "train" else "")
        if a.show:
            print("# seed %d%s\n%s" % (s, what, src))
        try:
            m = check(src, state, inputs, a.backend, a.mode,
                      True if a.dynamic else None, whole, train)
        except Exception:
            m = "checker crashed: " + traceback.format_exc()
        if m:
            bad += 1
            print("FINDING seed %d (%s, %s%s): %s\n%s" % (
                s, a.mode, a.backend, what, m, src), flush=True)
    for k, v in sorted(pf.STATS.items(), key=lambda kv: -kv[1]):
        print("%6d %s" % (v, k))
    print("%d findings" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
