"""Helpers of the kiln package tests: import a function or module with the
FX importer and run the kg.program through a Kiln session."""

import torch

import kiln
from kiln import _fx_import, _tracer


def import_program(fn, *inputs, name="prog", dynamic_dims=()):
    """Traces `fn` (module or function) on `inputs` and imports it; returns
    (ImportResult, GraphModule)."""
    module = fn if isinstance(fn, torch.nn.Module) else None
    forward = fn.forward if module is not None else fn
    imp = _fx_import.FxImporter(
        name, module, list(inputs), dynamic_dims,
        root_location=_fx_import.function_location(forward))
    gm = _tracer.trace(module, fn, imp, None)
    return imp.finish(), gm


def program_tensors(result, inputs, root):
    out = []
    for a in result.args:
        if a.is_input:
            out.append(inputs[a.input_index])
        elif a.seed:
            out.append(_fx_import.new_seed())
        else:
            obj = root
            for part in a.qualname.split("."):
                obj = _fx_import.raw_getattr(obj, part)
            out.append(obj)
    return out


def run_program(result, inputs, root, backend="eager", session=None):
    """Loads the imported program into a fresh session (or `session`) and
    calls it once; returns the flat results and the session."""
    s = session or kiln.Session()
    if session is None:
        s.set_option("backend", backend)
        s.load(result.text, "%s.mlir" % result.name)
    tensors = program_tensors(result, inputs, root)
    return s.call(result.name, tensors,
                  [t.requires_grad for t in tensors]), s


def run(fn, *inputs, backend="eager"):
    """fn imported and run by Kiln; returns its outputs in fn's structure."""
    result, gm = import_program(fn, *inputs)
    root = fn if isinstance(fn, torch.nn.Module) else gm
    outs, _ = run_program(result, list(inputs), root, backend)
    tensors = program_tensors(result, list(inputs), root)
    from kiln._compile import _Program
    return _Program.unflatten(result, outs, tensors)


def check_module_backward(m, ref, backend, *args):
    """`m` compiled (fullgraph) against `ref` (the same module, eager, maybe
    in another dtype): the scalar output and, after backward, every
    parameter's gradient."""
    want = ref(*args)
    want.backward()
    got = kiln.compile(m, backend=backend, fullgraph=True)(*args)
    got.backward()
    torch.testing.assert_close(got, want)
    for (n, p), (_, q) in zip(m.named_parameters(), ref.named_parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=n)


def run_in_threads(work, n):
    """Runs work(i) for i < n on n threads at once; raises the first
    exception any of them raised."""
    import threading
    errors = []

    def guarded(i):
        try:
            work(i)
        except Exception as e:  # re-raised below, in the caller's thread
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
