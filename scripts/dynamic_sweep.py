"""Dynamic-size sweep over PyTorch's OpInfo samples (float32, on demand;
about 5 minutes on the interpreter).

For each sample whose input has a dim 0 of size >= 2: the tensors with
that dim 0 are marked dynamic (kiln.mark_dynamic) and the function is
called, then called again with those tensors grown by one row along dim 0;
both results are compared with eager PyTorch. Prints every sample that
does not compile once and agree, and a summary. MISMATCH2 (a wrong answer
at the second size) and ERROR KilnError (a program that fails at the new
size) are defects; SpecializationError is a converter that needs the size
as a number (a clear refusal: the dim cannot stay dynamic there).

  KILN_BUILD_DIR=$PWD/build PYTHONPATH=python \
      /usr/bin/python3 scripts/dynamic_sweep.py [op names...]
"""
import os, sys, signal, warnings, traceback
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "python"))
import torch, kiln
import opinfo_sweep as S
warnings.simplefilter("ignore")
# --last: grow the input's last dim (and the same dim of every tensor of
# the same rank whose size there matches) instead of dim 0.
LAST = "--last" in sys.argv
only = [a for a in sys.argv[1:] if a != "--last"]
class TO(Exception): pass
def alarm(*a): raise TO()
signal.signal(signal.SIGALRM, alarm)
res = {}
ops = S.op_db()
for op in ops:
    key = S.op_key(op)
    if only and key not in only: continue
    if S.skip_reason(key) or "float32" not in S.op_dtypes(op): continue
    try:
        smp = S.samples(op, "float32")
    except Exception:
        continue
    for si, sample in enumerate(smp[:6]):
        try:
            fn, ts = S.make_call(op, sample)
        except Exception:
            continue
        inp = sample.input
        if not isinstance(inp, torch.Tensor) or inp.dim() == 0:
            continue
        D = inp.dim() - 1 if LAST else 0
        B = inp.shape[D]
        if B < 2 or any(t.layout != torch.strided for t in ts):
            continue
        grow = [t.dim() == inp.dim() and t.shape[D] == B if LAST else
                t.dim() > 0 and t.shape[0] == B for t in ts]
        torch.manual_seed(si)

        def grown(t):
            first = t.narrow(D, 0, 1)
            return torch.cat([t, first * 0.5 if t.is_floating_point()
                              else first], D)
        ts2 = [grown(t) if g else t for t, g in zip(ts, grow)]
        try:
            want1 = fn(*S._clone(ts)); want2 = fn(*S._clone(ts2))
        except Exception:
            continue
        kiln.reset()
        status = "pass"
        signal.alarm(60)
        try:
            cf = kiln.compile(fn, backend="eager")
            a1 = S._clone(ts)
            for t, g in zip(a1, grow):
                if g: kiln.mark_dynamic(t, D)
            got1 = cf(*a1)
            d = S.compare(want1, got1)
            if d: status = "mismatch1: " + d
            else:
                got2 = cf(*S._clone(ts2))
                d = S.compare(want2, got2)
                if d: status = "MISMATCH2: " + d
                else: status = "pass (%d programs)" % len(cf._kiln.programs)
        except TO:
            status = "timeout"
        except (kiln.Unsupported,) as e:
            status = "unsupported: " + S._first_line(e)
        except Exception as e:
            status = "ERROR %s: %s" % (type(e).__name__, S._first_line(e))
        finally:
            signal.alarm(0)
        if not status.startswith("pass (1") and not status.startswith("unsupported"):
            print(key, si, [tuple(t.shape) for t in ts], status, flush=True)
        res.setdefault(status.split(":")[0].split(" (")[0], 0)
        res[status.split(":")[0].split(" (")[0]] += 1
print(res)
