"""`pip install ./python` works offline (Debian's pip, no build isolation,
no index) and the installed package finds the C library it bundled."""

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))


def test_pip_install_offline(tmp_path):
    build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
    # Install from a copy, so pip's in-tree build files stay out of the
    # checkout; KILN_BUILD_DIR tells setup.py where the library is.
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                  "__pycache__"))
    target = tmp_path / "site"
    env = dict(os.environ, KILN_BUILD_DIR=build, PIP_NO_INDEX="1")
    env.pop("KILN_LIBRARY", None)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation",
         "--no-deps", "--no-index", "--target", str(target), str(src)],
        env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / "kiln" / "libKilnCAPI.so").exists()
    # Imported from elsewhere, with no build tree in reach.
    env = dict(os.environ, PYTHONPATH=str(target))
    env.pop("KILN_LIBRARY", None)
    env.pop("KILN_BUILD_DIR", None)
    code = ("import kiln, torch\n"
            "print(kiln.library_path())\n"
            "s = kiln.Session()\n"
            "s.load(open(%r).read(), 'toy')\n"
            "s.register_host_callback('print', lambda ins: [])\n"
            "a = torch.ones(10); b = torch.ones(10)\n"
            "print(s.call('toy_example', [a, b])[0][0].item())\n"
            % os.path.join(ROOT, "examples", "toy_example.mlir"))
    proc = subprocess.run([sys.executable, "-c", code], env=env,
                          cwd=str(tmp_path), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert lines[0] == str(target / "kiln" / "libKilnCAPI.so")
    assert float(lines[1]) == 0.5
