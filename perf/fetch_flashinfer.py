#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Extracts FlashInfer's sampling operators from a flashinfer-python wheel into
a small self-contained package for perf/peers.py, and optionally builds them
ahead of time with FlashInfer's own JIT build (scripts/fetch-peers.sh runs
this; the output is git-ignored: third-party code is never committed).

    perf/fetch_flashinfer.py --wheel FLASHINFER.whl --tvm-wheel TVM_FFI.whl
                             --dest .peers/flashinfer [--prebuild]
                             [--cuda-home DIR] [--arch 9.0] [--jobs N]
                             [--build-wheel W.whl ...]

The full wheel is 62 MB (426 MB unpacked) and `import flashinfer` imports
every operator family, which needs cutlass-dsl, cudnn-frontend, nccl4py and
more; the GPU machine has no network and the carried tree is limited. The
sampling operators need little of it:

  flashinfer/sampling.py       verbatim, except its module-level imports of
                               .api_logging, .jit.cake_blackwell_softmax and
                               .utils, pointed at _qrita_shim.py, and of
                               .trace.templates.sampling, replaced by `= None`
                               (API-trace metadata, unused at log level 0)
  flashinfer/_qrita_shim.py    perf/flashinfer_shim.py (identity decorators,
                               as FlashInfer's own are at log level 0) plus
                               the utils.py functions sampling.py calls,
                               verbatim
  flashinfer/jit/{core,cpp_ext,env,utils,_cuda_architecture,sampling}.py,
  flashinfer/{compilation_context,version,_build_meta}.py
                               verbatim: FlashInfer's JIT, so the kernels are
                               built with FlashInfer's own nvcc flags and
                               cached where FLASHINFER_WORKSPACE_BASE says
  flashinfer/__init__.py, flashinfer/jit/__init__.py
                               stubs (version; `from . import sampling`)
  flashinfer/data/csrc, data/include
                               the sampling module's sources
                               (jit/sampling.py) and their #include closure
  flashinfer/data/cccl         the vendored CCCL headers (cub, libcudacxx,
                               thrust) FlashInfer compiles against

Written to DEST: flashinfer-sampling.tgz (that package), the apache-tvm-ffi
wheel (FlashInfer's runtime: module loading and the C++ FFI headers),
VERSION, MANIFEST, and with --prebuild sampling-sm<arch>a.so and the
build.ninja it was built with.

--prebuild runs FlashInfer's JIT build here (gen_sampling_module().build(),
the same ninja file and nvcc flags it writes on the GPU machine) with this
machine's nvcc for --arch, so the GPU machine loads the module instead of
compiling it (about 2 minutes there). It needs CUDA >= 12.8 here (the GPU
machine has 13.0) but neither torch nor a GPU: FlashInfer's build reads only
torch's C++ ABI flag (1, as torch 2.11's) and dtype names from torch, and
include paths from tvm_ffi, so small stand-ins for those two are put on the
path of the build process (packaging and filelock come from --build-wheel).
perf/peers.py installs the prebuilt module as FlashInfer's AOT module
(flashinfer/data/aot/sampling/sampling.so, where FlashInfer looks for
prebuilt kernels) only on a GPU of that compute capability; otherwise, or if
it fails to load, FlashInfer JIT-compiles it there.
"""

import argparse
import ast
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

PY_VERBATIM = [
    "flashinfer/version.py",
    "flashinfer/_build_meta.py",
    "flashinfer/compilation_context.py",
    "flashinfer/jit/core.py",
    "flashinfer/jit/cpp_ext.py",
    "flashinfer/jit/env.py",
    "flashinfer/jit/utils.py",
    "flashinfer/jit/_cuda_architecture.py",
    "flashinfer/jit/sampling.py",
]
# sampling.py's module-level imports: rewritten (module -> how).
SHIMMED = {"api_logging": "shim", "jit.cake_blackwell_softmax": "shim", "utils": "shim",
           "trace.templates.sampling": "none"}
# What _qrita_shim.py takes verbatim from flashinfer/utils.py.
UTILS_NAMES = ["_cache_buf", "_cache_buf_retired", "_get_cache_buf", "get_device_properties",
               "get_compute_capability", "device_support_pdl", "get_default_generators"]
CCCL_TREES = ["cub/cub", "libcudacxx/include", "thrust/thrust"]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)

STUB_INIT = '''"""Not FlashInfer's __init__: qrita's extract of FlashInfer's sampling
operators (perf/fetch_flashinfer.py); the rest of the package is left out."""

from .version import __version__ as __version__  # noqa: F401
from .version import __git_commit__ as __git_commit__  # noqa: F401
from . import sampling as sampling  # noqa: F401
'''
STUB_JIT_INIT = '''"""Not FlashInfer's jit/__init__ (which imports every operator family):
qrita's extract keeps the JIT core and the sampling module's spec only."""
'''

# Build-only stand-ins (never shipped): what FlashInfer's JIT build reads
# from torch and tvm_ffi.
STUB_TORCH = '''"""Build-only stand-in for torch (perf/fetch_flashinfer.py --prebuild):
FlashInfer's JIT build reads torch's C++ ABI flag and names dtypes."""


class _DType:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


class _C:
    _GLIBCXX_USE_CXX11_ABI = True  # torch 2.11's wheels


class version:
    cuda = None


class cuda:
    @staticmethod
    def device_count():
        return 0

    @staticmethod
    def is_available():
        return False


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    value = _DType(name)
    globals()[name] = value
    return value
'''
STUB_TVM = '''"""Build-only stand-in for tvm_ffi: the headers of the wheel the GPU machine
gets (perf/fetch_flashinfer.py --prebuild)."""

from . import libinfo  # noqa: F401


def load_module(path):
    raise RuntimeError("build-only tvm_ffi stand-in")
'''
STUB_TVM_LIBINFO = '''INCLUDE = {include!r}


def find_include_path():
    return INCLUDE


def find_dlpack_include_path():
    return INCLUDE
'''
BUILD_SCRIPT = '''
import sys, time
from flashinfer.jit.sampling import gen_sampling_module
spec = gen_sampling_module()
t0 = time.time()
spec.build(verbose=True)
print("BUILT", spec.jit_library_path, spec.ninja_path, "%.0f s" % (time.time() - t0))
'''


def rewrite_sampling(text):
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.parse(text).body:
        if not (isinstance(node, ast.ImportFrom) and node.level == 1):
            continue
        how = SHIMMED.get(node.module or "")
        if how is None:
            continue
        names = [a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names]
        if how == "shim":
            new = f"from ._qrita_shim import {', '.join(names)}  # was: from .{node.module}\n"
        else:
            new = "".join(f"{a.asname or a.name} = None  # was: from .{node.module} import {a.name}\n"
                          for a in node.names)
        edits.append((node.lineno - 1, node.end_lineno, new))
    assert len(edits) == len(SHIMMED), "sampling.py's imports changed: " + repr(edits)
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = [new]
    header = ("# Extracted from the flashinfer-python wheel by perf/fetch_flashinfer.py; only\n"
              "# the module-level imports of .api_logging, .jit.cake_blackwell_softmax,\n"
              "# .trace.templates.sampling and .utils were rewritten. Not qrita's code.\n")
    out = header + "".join(lines)
    ast.parse(out)
    return out


def shim_source(shim_path, utils_text):
    tree = ast.parse(utils_text)
    parts = {}
    for node in tree.body:
        name = None
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            name = node.name
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
        if name in UTILS_NAMES and name not in parts:
            seg = ast.get_source_segment(utils_text, node)
            deco = "".join("@" + ast.get_source_segment(utils_text, d) + "\n"
                           for d in getattr(node, "decorator_list", []))
            parts[name] = deco + seg
    missing = [n for n in UTILS_NAMES if n not in parts]
    assert not missing, f"flashinfer/utils.py no longer defines {missing}"
    out = open(shim_path).read() + "\n" + "\n\n\n".join(parts[n] for n in UTILS_NAMES) + "\n"
    ast.parse(out)
    return out


def include_closure(z, sources):
    """Files under flashinfer/data/{csrc,include} reached from `sources`
    through #include (every branch of every #if: a superset)."""
    names = set(z.namelist())
    roots = ["flashinfer/data/include", "flashinfer/data/csrc"]
    seen, todo = set(), list(sources)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for inc in INCLUDE_RE.findall(z.read(f).decode("utf-8", "replace")):
            for cand in [os.path.normpath(os.path.join(os.path.dirname(f), inc))] + \
                        [f"{r}/{inc}" for r in roots]:
                if cand in names:
                    todo.append(cand)
                    break
    return sorted(seen)


def build_tree(z, shim_path):
    """{archive path: bytes} of the extract."""
    files = {}
    for path in PY_VERBATIM:
        text = z.read(path).decode()
        files[path] = text.encode()
    # Every relative import of the verbatim files must resolve inside the extract.
    have = {p[len("flashinfer/"):-3].replace("/", ".") for p in PY_VERBATIM}
    have |= {"jit", "sampling", "_qrita_shim"}
    for path in PY_VERBATIM:
        parts = path[len("flashinfer/"):-3].split("/")[:-1]  # the file's package
        for node in ast.parse(z.read(path).decode()).body:
            if not (isinstance(node, ast.ImportFrom) and node.level):
                continue
            base = parts[:len(parts) - (node.level - 1)]
            targets = [".".join(base + [node.module])] if node.module else \
                [".".join(base + [a.name]) for a in node.names]
            for t in targets:
                assert t in have, f"{path}: imports {t} (not extracted)"
    files["flashinfer/sampling.py"] = rewrite_sampling(z.read("flashinfer/sampling.py").decode()).encode()
    files["flashinfer/_qrita_shim.py"] = shim_source(
        shim_path, z.read("flashinfer/utils.py").decode()).encode()
    files["flashinfer/__init__.py"] = STUB_INIT.encode()
    files["flashinfer/jit/__init__.py"] = STUB_JIT_INIT.encode()
    # The sampling module's sources, from its JIT spec.
    spec = z.read("flashinfer/jit/sampling.py").decode()
    cu = re.findall(r'FLASHINFER_CSRC_DIR\s*/\s*"([^"]+)"', spec)
    assert cu, "flashinfer/jit/sampling.py lists no sources"
    for path in include_closure(z, [f"flashinfer/data/csrc/{c}" for c in cu]):
        files[path] = z.read(path)
    for tree in CCCL_TREES:
        prefix = f"flashinfer/data/cccl/{tree}/"
        for name in z.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                files[name] = z.read(name)
    for name in z.namelist():
        if re.match(r"flashinfer/data/cccl/LICENSE", name) or \
                re.match(r"[^/]+\.dist-info/licenses/LICENSE$", name):
            files["flashinfer/" + os.path.basename(name) if "dist-info" in name else name] = z.read(name)
    return files, cu


def write_tgz(path, files):
    with tarfile.open(path, "w:gz", compresslevel=9) as tar:
        for name in sorted(files):
            data = files[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1700000000
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


def prebuild(files, tvm_wheel, build_wheels, dest, arch, cuda_home, jobs):
    tmp = tempfile.mkdtemp(prefix="qrita-fi-build-")
    try:
        site = os.path.join(tmp, "site")
        for name, data in files.items():
            p = os.path.join(site, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as fh:
                fh.write(data)
        tvm_dir = os.path.join(tmp, "tvm")
        zipfile.ZipFile(tvm_wheel).extractall(tvm_dir)
        stubs = os.path.join(tmp, "stubs")
        os.makedirs(os.path.join(stubs, "torch"))
        os.makedirs(os.path.join(stubs, "tvm_ffi"))
        open(os.path.join(stubs, "torch", "__init__.py"), "w").write(STUB_TORCH)
        open(os.path.join(stubs, "tvm_ffi", "__init__.py"), "w").write(STUB_TVM)
        open(os.path.join(stubs, "tvm_ffi", "libinfo.py"), "w").write(
            STUB_TVM_LIBINFO.format(include=os.path.join(tvm_dir, "tvm_ffi", "include")))
        env = dict(os.environ)
        env.update({
            "PYTHONPATH": os.pathsep.join([stubs, site] + list(build_wheels)),
            "FLASHINFER_WORKSPACE_BASE": os.path.join(tmp, "ws"),
            "FLASHINFER_CUDA_ARCH_LIST": arch,
            "CUDA_HOME": cuda_home,
            "MAX_JOBS": str(jobs),
            "PATH": os.path.join(cuda_home, "bin") + os.pathsep + env.get("PATH", ""),
        })
        print(f"[fetch_flashinfer] building FlashInfer's sampling module for sm_{arch.replace('.', '')}a with "
              f"{cuda_home}/bin/nvcc, {jobs} jobs (several minutes)", flush=True)
        t0 = time.time()
        res = subprocess.run([sys.executable, "-c", BUILD_SCRIPT], env=env, cwd=tmp,
                             capture_output=True, text=True)
        log = res.stdout + res.stderr
        with open(os.path.join(dest, "prebuild.log"), "w") as fh:
            fh.write(log)
        if res.returncode != 0:
            print(log[-4000:], file=sys.stderr)
            raise SystemExit(f"prebuild failed (full log: {dest}/prebuild.log)")
        m = re.search(r"^BUILT (\S+) (\S+)", log, re.M)
        so, ninja = m.group(1), m.group(2)
        tag = arch.replace(".", "")
        shutil.copy(so, os.path.join(dest, f"sampling-sm{tag}a.so"))
        text = open(ninja).read().replace(tmp, "<build>")
        open(os.path.join(dest, f"sampling-sm{tag}a.build.ninja"), "w").write(text)
        print(f"[fetch_flashinfer] built in {time.time() - t0:.0f} s: "
              f"{os.path.getsize(so) / 2**20:.1f} MiB", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", required=True, help="the flashinfer-python wheel")
    ap.add_argument("--tvm-wheel", required=True, help="the apache-tvm-ffi wheel for the GPU machine")
    ap.add_argument("--dest", required=True)
    ap.add_argument("--prebuild", action="store_true")
    ap.add_argument("--cuda-home", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    ap.add_argument("--arch", default="9.0", help="compute capability to prebuild for (9.0: H100, H200)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--build-wheel", action="append", default=[],
                    help="pure-Python wheels the build imports (packaging, filelock)")
    args = ap.parse_args()

    z = zipfile.ZipFile(args.wheel)
    version = re.search(r'__version__ = "([^"]+)"', z.read("flashinfer/_build_meta.py").decode()).group(1)
    files, sources = build_tree(z, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                "flashinfer_shim.py"))
    os.makedirs(args.dest, exist_ok=True)
    for old in os.listdir(args.dest):
        p = os.path.join(args.dest, old)
        if os.path.isfile(p):
            os.remove(p)
    write_tgz(os.path.join(args.dest, "flashinfer-sampling.tgz"), files)
    shutil.copy(args.tvm_wheel, args.dest)
    tvm_name = os.path.basename(args.tvm_wheel)
    with open(os.path.join(args.dest, "VERSION"), "w") as fh:
        fh.write(f"flashinfer-python {version} (sampling extract), {tvm_name}\n")
    with open(os.path.join(args.dest, "MANIFEST"), "w") as fh:
        fh.write(f"flashinfer-python {version}: {os.path.basename(args.wheel)}\n"
                 f"sources of the sampling module: {', '.join(sources)}\n"
                 f"{len(files)} files, {sum(len(d) for d in files.values()) / 2**20:.1f} MiB unpacked\n")
        for name in sorted(files):
            if not name.startswith("flashinfer/data/cccl/"):
                fh.write(f"  {name} {len(files[name])}\n")
        fh.write(f"  flashinfer/data/cccl/{{{','.join(CCCL_TREES)}}}: "
                 f"{sum(1 for n in files if n.startswith('flashinfer/data/cccl/'))} files\n")
    if args.prebuild:
        prebuild(files, args.tvm_wheel, args.build_wheel, args.dest, args.arch, args.cuda_home,
                 args.jobs)
    for name in sorted(os.listdir(args.dest)):
        print(f"  {name:70s} {os.path.getsize(os.path.join(args.dest, name)) / 2**20:7.2f} MiB")


if __name__ == "__main__":
    main()
