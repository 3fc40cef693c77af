"""Worst-case stack depth of a linked firmware, from its own disassembly.

Every function of the image (ours, newlib's, the naked assembly ones alike) is read from
``objdump -d``:

- its frame: the bytes its instructions take off the stack pointer (PUSH / STMDB SP! register
  lists, SUB SP by an immediate, VPUSH, STR with SP pre-decrement), all added up, as if every
  path took every one of them (an overestimate where paths differ, never an underestimate);
  an SP set from a register (a variable-length array, alloca) makes the bound unknown;
- its calls: BL / BLX to a symbol, and branches to another function's symbol (tail calls,
  counted as calls from inside the frame: an overestimate again); an indirect call (BLX or BX
  through a register other than LR) may reach any function whose address the image stores as
  data (literal pools, .rodata, .data), which is what a function pointer needs.

The bound is the deepest call chain from the reset handler, plus, for every distinct exception
handler in the vector table, its own deepest chain and the exception frame the core pushes (32
bytes; 104 with the FPU's lazily stacked context), as if all of them nested at once. Recursion
(a cycle in the call graph, indirect calls included) makes it unknown. ``bound`` is None then,
with the reason in ``note``: the firmware keeps its board's fixed reserve either way; the size
report prints the bound beside it (and the emulator's painted-stack measurement checks it).
"""

from __future__ import annotations

import bisect
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
_INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
_TARGET = re.compile(r"^[0-9a-f]+ <([^>+]+)(\+0x[0-9a-f]+)?>")
_WORD = re.compile(r"^\.word\s+0x([0-9a-f]+)")
_REGS = re.compile(r"\{([^}]*)\}")
_IMM = re.compile(r"#(-?\d+)")
BRANCHES = {"b", "b.w", "b.n", "cbz", "cbnz"} | {
    f"b{c}{w}"
    for c in ("eq", "ne", "cs", "cc", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le")
    for w in ("", ".w", ".n")
}
EXC_FRAME = 32  # r0-r3, r12, lr, pc, xpsr
EXC_FRAME_FPU = 104  # plus s0-s15, fpscr and a reserved word


@dataclass
class Function:
    name: str
    addr: int
    frame: int = 0
    dynamic: bool = False  # SP set from a register
    calls: set[str] = field(default_factory=set)
    indirect: bool = False
    targets: set[int] = field(default_factory=set)  # addresses branched to (resolved to calls)


@dataclass(frozen=True)
class StackBound:
    bound: int | None  # bytes, or None: unknown (see note)
    note: str  # how it was found, or why it is unknown
    deepest: tuple[str, ...] = ()  # the deepest chain from the reset handler


def _reg_bytes(regs: str) -> int:
    n = 0
    for part in regs.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:  # d8-d15, s16-s31 (VPUSH ranges)
            a, b = part.split("-")
            k = int(b[1:]) - int(a[1:]) + 1
            n += k * (8 if a.startswith("d") else 4)
        else:
            n += 8 if part.startswith("d") else 4
    return n


def parse_functions(disassembly: str) -> tuple[dict[str, Function], set[int]]:
    """Functions (frame, calls) of an ``objdump -d`` listing, and the words its literal pools
    hold (candidate function addresses). A file-local name defined by several objects (a
    header's static helper) names its first copy; the others are ``name@address``."""
    funcs: dict[str, Function] = {}
    words: set[int] = set()
    cur: Function | None = None
    for line in disassembly.splitlines():
        m = _FUNC.match(line)
        if m:
            name, addr = m.group(2), int(m.group(1), 16)
            if name in funcs and funcs[name].addr != addr:  # a static name in two objects
                name = f"{name}@{addr:x}"
            cur = funcs.setdefault(name, Function(name, addr))
            continue
        m = _INSN.match(line)
        if not m or cur is None:
            continue
        op, args = m.group(2), m.group(3).split(";")[0].split("@")[0].strip()
        w = _WORD.match(f"{op} {args}")
        if w:
            words.add(int(w.group(1), 16))
            continue
        low = args.replace(" ", "")
        if op in ("push", "push.w", "vpush") or (op.startswith("stmdb") and low.startswith("sp!")):
            r = _REGS.search(args)
            cur.frame += _reg_bytes(r.group(1)) if r else 0
        elif op in ("sub", "sub.w", "subw", "subs") and low.startswith("sp,"):
            imm = _IMM.search(args)
            if imm and (low.startswith("sp,#") or low.startswith("sp,sp,#")):
                cur.frame += abs(int(imm.group(1)))
            else:
                cur.dynamic = True
        elif op in ("mov", "mov.w") and low.startswith("sp,"):
            cur.dynamic = True
        elif op.startswith("str") and "[sp,#-" in low and low.endswith("]!"):
            imm = _IMM.search(args.split("[", 1)[1])
            cur.frame += abs(int(imm.group(1))) if imm else 0
        elif op in ("bl", "blx") or op in BRANCHES:
            target = args.split(",")[-1].strip()
            t = _TARGET.match(target)
            if t:
                cur.targets.add(int(target.split()[0], 16))
            elif op == "blx":
                cur.indirect = True
        elif op == "bx" and args not in ("lr",):
            cur.indirect = True
    # a branch target is a call when it lies in another function (by address: objdump may name
    # an address after an absolute linker symbol that happens to share it)
    starts = sorted((f.addr, f.name) for f in funcs.values())
    addrs = [a for a, _ in starts]
    for f in funcs.values():
        for t in f.targets:
            i = bisect.bisect_right(addrs, t) - 1
            if i >= 0 and starts[i][1] != f.name:
                f.calls.add(starts[i][1])
    return funcs, words


def _section_words(objdump: str, elf: Path, sections: list[str]) -> list[int]:
    """The little-endian 32-bit words of the given sections, in order (``objdump -s``)."""
    args = [objdump, "-s"]
    for sec in sections:
        args += ["-j", sec]
    out = subprocess.run([*args, str(elf)], check=True, capture_output=True, text=True).stdout
    words: list[int] = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or not re.fullmatch(r"[0-9a-f]+", parts[0]):
            continue
        for chunk in parts[1:5]:
            if re.fullmatch(r"[0-9a-f]{8}", chunk):
                words.append(int.from_bytes(bytes.fromhex(chunk), "little"))
    return words


def stack_bound(elf: Path, objdump: str, *, fpu: bool) -> StackBound:
    """The worst-case stack depth of ``elf`` (see the module doc)."""
    dis = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    funcs, pool = parse_functions(dis)
    by_addr = {f.addr: f.name for f in funcs.values()}
    sections = subprocess.run(
        [objdump, "-h", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    present = set(re.findall(r"^\s*\d+\s+(\S+)", sections, re.M))
    data = [s for s in (".rodata", ".data", ".init_array", ".fini_array") if s in present]
    stored = pool | set(_section_words(objdump, elf, data) if data else [])
    taken = {by_addr[w & ~1] for w in stored if w & 1 and (w & ~1) in by_addr}
    vec_list = _section_words(objdump, elf, [".isr_vector"]) if ".isr_vector" in present else []
    handlers = []
    for w in vec_list[1:]:  # word 0 is the initial stack pointer
        name = by_addr.get(w & ~1) if w & 1 else None
        if name and name not in handlers:
            handlers.append(name)
    reset = "Reset_Handler" if "Reset_Handler" in funcs else (handlers[0] if handlers else None)
    if reset is None:
        return StackBound(None, "no reset handler found")
    for f in funcs.values():
        if f.dynamic:
            return StackBound(None, f"{f.name} sets the stack pointer from a register")

    memo: dict[str, tuple[int, tuple[str, ...]]] = {}
    active: list[str] = []

    def depth(name: str) -> tuple[int, tuple[str, ...]]:
        if name in memo:
            return memo[name]
        f = funcs.get(name)
        if f is None:
            raise _Unknown(f"calls {name}, not in the image")
        if name in active:
            cycle = " -> ".join(active[active.index(name) :] + [name])
            raise _Unknown(f"recursion: {cycle}")
        active.append(name)
        callees = set(f.calls) | (taken if f.indirect else set())
        best: tuple[int, tuple[str, ...]] = (0, ())
        for c in sorted(callees):
            d = depth(c)
            if d[0] > best[0]:
                best = d
        active.pop()
        memo[name] = (f.frame + best[0], (name, *best[1]))
        return memo[name]

    try:
        main, chain = depth(reset)
        exc = 0
        for h in handlers:
            if h != reset:
                exc += (EXC_FRAME_FPU if fpu else EXC_FRAME) + depth(h)[0]
    except _Unknown as e:
        return StackBound(None, str(e))
    note = (
        f"call graph of {len(funcs)} functions: {main} B from {reset}, {exc} B for "
        f"{max(len(handlers) - 1, 0)} exception handler(s) nesting on top"
    )
    return StackBound(main + exc, note, chain)


class _Unknown(Exception):
    pass


def _cli(path: str) -> None:  # pragma: no cover - a developer's probe
    print(stack_bound(Path(path), "arm-none-eabi-objdump", fpu=True))


if __name__ == "__main__":  # pragma: no cover
    import sys

    _cli(sys.argv[1])
