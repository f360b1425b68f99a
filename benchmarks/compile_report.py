"""The compiler's report on the CUDA kernels, without a GPU: registers, local memory, SASS.

Compiles each kernel's Python source to PTX for a compute capability (NVVM, as numba
does on the device), assembles it with ``ptxas -v`` and, where ``cuobjdump`` is on the
PATH, counts the SASS instructions of the kernel and of its innermost loop. Run it before
and after a kernel change (METHOD.md: look at the report before guessing)::

    python -m benchmarks.compile_report --k 8 --cc 9.0

Needs the CUDA toolkit's NVVM and ``ptxas`` (``CUDA_HOME``); no device. Without a toolkit,
from wheels: ``pip install numba-cuda nvidia-cuda-nvcc-cu12 nvidia-cuda-cuobjdump
nvidia-cuda-nvdisasm``, then ``CUDA_HOME=$SITE/nvidia/cuda_nvcc`` and
``PATH=$SITE/nvidia/cu13/bin:$PATH`` (``$SITE``: that environment's site-packages).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types

from numba import bool_, cuda, int16, int32, int64, uint8, uint32
from numba.types import Tuple
from readalign.kernels import cuda as kcuda

from benchmarks.ablation import cuda_packed

I64 = int64[::1]
I32 = int32[::1]
SEQ = uint8[::1]
I16 = int16[::1]
U32 = uint32[::1]
SEQS = Tuple((SEQ, I64, SEQ, I64))
SCORING = Tuple((int64, I32, int64, int64, int64, int64))
SCORED_BOUNDS = Tuple((I16, I16, I16, I16, int64, int64, int64))
SCORED_ENDS = Tuple((I32, I64, I64))
SCORED_FORWARD = (SEQS, SCORING, SCORED_BOUNDS, SCORED_ENDS)
"""The scored kernels as the GPU runs them on batches whose values fit int16."""
SCORED_TRACEBACK = (SEQS, SCORING, Tuple((int64, bool_)), SCORED_BOUNDS, Tuple((I64, I64)),
                    Tuple((U32, I64, I64, I64, I64)))
SCORED_PACKED_FORWARD = (SEQS, Tuple((int64, U32, int64, int64, int64, int64)),
                         Tuple((U32, U32, U32, U32, int64, int64, int64)), SCORED_ENDS)
"""The packed local pass (two pairs per thread) as the GPU runs it on DNA batches it admits."""
EDIT_SEQS = Tuple((SEQ, I64, SEQ, I64, I64))
EDIT_BOUNDS = Tuple((I16, I16, int64, int64))
EDIT_ENDS = Tuple((I32, I64, I64))
EDIT_FORWARD = (EDIT_SEQS, Tuple((bool_, int64, int64, bool_)), EDIT_BOUNDS, EDIT_ENDS)
EDIT_TRACEBACK = (EDIT_SEQS, Tuple((bool_, int64, bool_)), EDIT_BOUNDS, EDIT_ENDS,
                  Tuple((I64, U32, I64)))
PACKED_FORWARD = (SEQ, I64, SEQ, I64, I64, I64, bool_, int64, int64, I32, I64)


def kernels(k: int, cc: tuple[int, int] = (9, 0)) -> dict:
    """Name → (python function, signature, register cap or None) of each kernel the report
    covers (the packed pass with Hopper's 16x2 minima only from sm_90 on)."""
    fwd, fwd_store, tb = kcuda.scored_kernels(k)
    edit_fwd, edit_tb, _ns = kcuda.kernels(k)
    found = {"edit_forward": (edit_fwd.py_func, EDIT_FORWARD, None),
             "edit_traceback": (edit_tb.py_func, EDIT_TRACEBACK, None),
             "scored_forward": (fwd.py_func, SCORED_FORWARD, None),
             "scored_forward_store": (fwd_store.py_func, SCORED_FORWARD,
                                      kcuda.CIGAR_MAX_REGISTERS),
             "scored_traceback": (tb.py_func, SCORED_TRACEBACK, kcuda.CIGAR_MAX_REGISTERS),
             "packed_forward_swar": (cuda_packed.packed_kernel(k, False).py_func, PACKED_FORWARD,
                                     None)}
    if cc >= (9, 0):
        packed_fwd, packed_store = kcuda.scored_packed_kernels(k)
        found["scored_packed_forward"] = (packed_fwd.py_func, SCORED_PACKED_FORWARD, None)
        found["scored_packed_forward_store"] = (packed_store.py_func, SCORED_PACKED_FORWARD,
                                                None)
        found["packed_forward_dpx"] = (cuda_packed.packed_kernel(k, True).py_func, PACKED_FORWARD,
                                       None)
    return found


def ptxas(ptx: str, cc: str, workdir: str, max_registers: int | None = None) -> tuple[str, str]:
    """Assemble PTX with ``ptxas -v`` (``-maxrregcount`` when given); returns (the resource
    lines, the cubin path)."""
    src = os.path.join(workdir, "k.ptx")
    cubin = os.path.join(workdir, "k.cubin")
    with open(src, "w") as fh:
        fh.write(ptx)
    arch = "sm_" + cc.replace(".", "")
    cap = [f"-maxrregcount={max_registers}"] if max_registers else []
    done = subprocess.run(["ptxas", "-v", f"-arch={arch}", "-O3", *cap, src, "-o", cubin],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"ptxas failed: {done.stderr.strip()}")
    lines = [ln.split("info    : ")[-1] for ln in done.stderr.splitlines()
             if "registers" in ln or "stack frame" in ln]
    return "\n    ".join(lines), cubin


def sass_text(cubin: str) -> str | None:
    """The cubin's SASS as ``cuobjdump -sass`` prints it (None without ``cuobjdump``)."""
    tool = shutil.which("cuobjdump")
    if tool is None:
        return None
    return subprocess.run([tool, "-sass", cubin], capture_output=True, text=True,
                          check=True).stdout


def sass_counts(text: str | None) -> tuple[collections.Counter, int]:
    """Opcode counts of the whole kernel and the instruction count of its largest loop body."""
    if text is None:
        return collections.Counter(), -1
    ops = []
    labels = {}
    branches = []
    for ln in text.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9.]*)\s*([^;]*);", ln)
        if not m:
            continue
        addr = int(m.group(1), 16)
        op = m.group(3).split(".")[0]
        ops.append((addr, op))
        labels[addr] = len(ops) - 1
        if op == "BRA":
            target = re.search(r"0x([0-9a-f]+)", m.group(4))
            if target:
                branches.append((len(ops) - 1, int(target.group(1), 16)))
    loop = max((src - labels[dst] + 1 for src, dst in branches
                if dst in labels and labels[dst] <= src), default=0)
    return collections.Counter(op for _a, op in ops), loop


def target_without_device(cc: tuple[int, int]) -> None:
    """Let numba compile device functions for ``cc`` where no GPU (no driver) is present.

    numba asks the current device for its compute capability when it compiles a
    device function; with no driver there is none, so the report names the target.
    """
    if cuda.is_available():
        return
    from numba.cuda import dispatcher

    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)


def main(argv: list[str] | None = None) -> int:
    """Print each kernel's registers, local memory and SASS summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=8, help="quadrant size (default 8)")
    ap.add_argument("--cc", default="9.0", help="compute capability (default 9.0: H100)")
    ap.add_argument("--only", help="report only kernels whose name contains this")
    ap.add_argument("--sass", metavar="DIR",
                    help="also write each kernel's SASS to DIR/NAME_kK.sass (to read its loops)")
    ap.add_argument("--maxrregcount", type=int, metavar="N",
                    help="cap every kernel's registers per thread at N, as "
                         "cuda.jit(max_registers=N) would (default: each kernel's own cap)")
    args = ap.parse_args(argv)
    cc = tuple(int(x) for x in args.cc.split("."))
    target_without_device(cc)
    with tempfile.TemporaryDirectory() as workdir:
        for name, (fn, sig, cap) in kernels(args.k, cc).items():
            if args.only and args.only not in name:
                continue
            ptx, _ = cuda.compile_ptx(fn, sig, cc=cc)
            report, cubin = ptxas(ptx, args.cc, workdir, args.maxrregcount or cap)
            text = sass_text(cubin)
            counts, loop = sass_counts(text)
            if args.sass and text is not None:
                os.makedirs(args.sass, exist_ok=True)
                with open(os.path.join(args.sass, f"{name}_k{args.k}.sass"), "w") as fh:
                    fh.write(text)
            print(f"{name} (k={args.k}, sm_{args.cc.replace('.', '')}):\n    {report}")
            if counts:
                top = ", ".join(f"{op} {n}" for op, n in counts.most_common(12))
                print(f"    SASS {sum(counts.values())} instructions; largest loop body {loop}; {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
