#!/usr/bin/env python3
"""Writes cuda/mont_ptx.cuh: Montgomery products over BLS12-381's Fp
(N = 12 words of 32 bits) and Fr (N = 8) as PTX carry chains, and checks
the very instruction sequences it writes by running them here on Python
integers against a·b·R⁻¹ mod p.

Why this shape (cuda/NOTES.md, v3). On sm_90 a `madc.lo.cc` followed by a
`madc.hi.cc` of the same two words into two adjacent accumulator words is
one SASS instruction, IMAD.WIDE.U32.X, with carry in and carry out. A row
t += a·b_i written as a lo chain and then a hi chain (v2) costs two
instructions per word product and per half (IMAD + IADD3.X), four in all.
So the products go in pairs: for even j, a_j·b_i lands on words (j, j+1)
of one accumulator A without overlapping the next even product; for odd j
on words (j−1, j) of a second accumulator B that stands one word higher.
Each row of the coarsely integrated operand scanning (CIOS) product:

  1. A += Σ_{j even} a_j·b_i·2^(32j)       one chain, carry into A_N
  2. B  = Σ_{j odd}  a_j·b_i·2^(32(j−1))   products side by side: no carry
  3. m  = A_0·(−p⁻¹) mod 2^32              (B starts at word 1)
  4. A += Σ_{j even} m·p_j·2^(32j)          A_0 becomes 0
  5. B += Σ_{j odd}  m·p_j·2^(32(j−1))
  6. T  = A/2^32 + B                        one add chain; T is the next A

For Fr, whose two low words are 1 and 2^32 − 1, steps 4 and 5 skip
those two word products (special_low; cuda/NOTES.md, v6): m = −A_0, so
A_0 + m·1 only carries c = [A_0 ≠ 0], and m·(2^32 − 1) = m·2^32 − m adds
A_0 to word 1 and m − c to word 2, which step 5's chain takes as plain
adds (--plain writes the products without this, to measure against).

The file also has add, subtract and the final reduction of each field as
single carry chains (chain_program), checked the same way.

T < 2p on entry gives T < 2p on exit (p < 2^(32N)/4 for both fields), so
T fits N words and B's carry out of step 5 and step 6's last carry are
zero; the numerator stays below 2^(32(N+1)). One final subtraction of p
(done in C++ by Fe::reduce_once) brings T below p. The modulus words are
immediates in the instructions, so they take no registers.

Run: python3 cuda/gen/mont_ptx.py > cuda/mont_ptx.cuh
     python3 cuda/gen/mont_ptx.py --check   (emulates the chains)
     python3 cuda/gen/mont_ptx.py --plain   (Fr's product as for Fp)
"""
import random
import sys

FIELDS = {
    "fp": (0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB, 12),
    "fr": (0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001, 8),
}
M32 = (1 << 32) - 1
FIELDS_BY_N = {n: p for p, n in FIELDS.values()}


def words(x, n):
    return [(x >> (32 * i)) & M32 for i in range(n)]


def special_low(pw):
    """Whether p's two low words are 1 and 2^32 − 1 (BLS12-381's Fr), the
    case step 5 does without multiplying by them (program)."""
    return pw[0] == 1 and pw[1] == M32 and "--plain" not in sys.argv


def program(p, n):
    """The chains of one product, as a list of blocks (one asm statement
    each); an instruction is (op, dst, x, y, z) over named registers
    a0.., b0.., A0.., B0.., T0.., m and immediate constants."""
    pw = words(p, n)
    inv = (-pow(p, -1, 1 << 32)) % (1 << 32)
    low = special_low(pw)
    blocks = []
    for i in range(n):
        bi = f"b{i}"
        # 1. A += even products of a·b_i (A is zero before row 0).
        ch = []
        for j in range(0, n, 2):
            ch.append(("madlo", f"A{j}", f"a{j}", bi, f"A{j}", j > 0))
            ch.append(("madhi", f"A{j+1}", f"a{j}", bi, f"A{j+1}", True))
        ch.append(("addc", f"A{n}", f"A{n}", "#0", None, True))  # A_N was 0
        blocks.append(ch)
        # 2. B = odd products of a·b_i, side by side.
        ch = []
        for j in range(1, n, 2):
            ch.append(("mullo", f"B{j-1}", f"a{j}", bi))
            ch.append(("mulhi", f"B{j}", f"a{j}", bi))
        blocks.append(ch)
        # 3. m = A_0·inv. For Fr, inv = −1 (p_0 = 1), and given it as an
        # immediate ptxas rewrites m as −A_0 and then splits every m·p_j
        # pair of steps 4 and 5 into two instructions (IMAD.X and
        # IMAD.HI.U32.X) instead of one IMAD.WIDE.U32.X: 48 instructions a
        # product more. So Fr's inv comes in a register, from constant
        # memory (field.cuh: d_fr_inv), which ptxas does not see through.
        blocks.append([("mullo", "m", "A0", "inv" if n == 8 else f"#{inv}")])
        # 4. A += even products of m·p.
        ch = []
        for j in range(2 if low else 0, n, 2):
            ch.append(("madlo", f"A{j}", "m", f"#{pw[j]}", f"A{j}", j > (2 if low else 0)))
            ch.append(("madhi", f"A{j+1}", "m", f"#{pw[j]}", f"A{j+1}", True))
        ch.append(("addc", f"A{n}", f"A{n}", "#0", None, True))
        blocks.append(ch)
        # 5. B += odd products of m·p (its carry out is zero: see above).
        ch = []
        if low:
            # Fr: p_0 = 1 and p_1 = 2^32 − 1, so m = −A_0 mod 2^32 and
            # m·(p_0 + p_1·2^32) needs no multiply. A_0 + m carries
            # c = [A_0 ≠ 0] into word 1; m·p_1 = m·2^32 − m puts
            # −m ≡ A_0 on word 1 and m − c on word 2. So word 1 (B_0)
            # gains A_0 + c and word 2 (B_1) gains h = m − c, all on the
            # ALU pipe: the two IMAD.HI a row they replace occupy the
            # multiplier, which bounds the NTT (cuda/NOTES.md, v6).
            blocks.append([("min", "c", "A0", "#1"), ("sub", "h", "m", "c")])
            ch.append(("add", "d", "A0", "m", None, False))
            ch.append(("add", "B0", "B0", "A0", None, True))
            ch.append(("add", "B1", "B1", "h", None, True))
        for j in range(3 if low else 1, n, 2):
            ch.append(("madlo", f"B{j-1}", "m", f"#{pw[j]}", f"B{j-1}", j > 1))
            ch.append(("madhi", f"B{j}", "m", f"#{pw[j]}", f"B{j}", True))
        blocks.append(ch)
        # 6. T = A/2^32 + B, the next row's A (A_N back to 0).
        ch = []
        for k in range(n):
            ch.append(("add", f"A{k}", f"A{k+1}", f"B{k}", None, k > 0))
        ch.append(("mov0", f"A{n}"))
        blocks.append(ch)
    return blocks


# Add, subtract and the final reduction, as single carry chains. Written in
# C++ (field.cuh, the host's form) the borrow of each word is a value: three
# instructions a word, and ptxas moves some of them to the multiplier
# (IMAD.X, IMAD.IADD), which bounds the NTT (cuda/NOTES.md, v6). Here they
# are one instruction a word and a select or a masked add. Registers: r0..
# is the result, updated in place (it holds a on entry for add and sub, t
# for reduce); b0.. the second operand; s0.. and k0.. are temporaries, mask
# is all ones after a borrow, P a predicate.
#   reduce: r < 2p  → r mod p            (s = r − p; keep r if that borrowed)
#   add:    a, b < p → a + b mod p       (a + b < 2p < 2^(32N): no carry out)
#   sub:    a, b < p → a − b mod p       (add p back, masked, after a borrow)
def chain_program(kind, p, n):
    pw = words(p, n)
    ins = []
    if kind == "add":
        for i in range(n):
            ins.append(("add", f"r{i}", f"r{i}", f"b{i}", i > 0, i < n - 1))
    if kind in ("add", "reduce"):
        for i in range(n):
            ins.append(("sub", f"s{i}", f"r{i}", f"#{pw[i]}", i > 0, True))
        ins.append(("sub", "mask", "#0", "#0", True, False))
        ins.append(("setne", "P", "mask"))
        for i in range(n):
            ins.append(("selp", f"r{i}", f"r{i}", f"s{i}", "P"))
    if kind == "sub":
        for i in range(n):
            ins.append(("sub", f"r{i}", f"r{i}", f"b{i}", i > 0, True))
        ins.append(("sub", "mask", "#0", "#0", True, False))
        for i in range(n):
            ins.append(("and", f"k{i}", "mask", f"#{pw[i]}"))
        for i in range(n):
            ins.append(("add", f"r{i}", f"r{i}", f"k{i}", i > 0, i < n - 1))
    return ins


def run_chain(ins, r, b, n):
    """Executes a chain program on Python integers with PTX's semantics:
    one carry flag, CC.CF, that add.cc sets to the carry and sub.cc to the
    borrow."""
    reg = {f"r{i}": r[i] for i in range(n)}
    reg.update({f"b{i}": b[i] for i in range(n)})
    val = lambda x: int(x[1:]) if x.startswith("#") else reg[x]
    cf = None
    for i in ins:
        op = i[0]
        if op in ("add", "sub"):
            _, d, x, y, cin, cout = i
            if cin and cf is None:
                raise ValueError(f"{i}: carry in with no carry set")
            c = cf if cin else 0
            v = val(x) + val(y) + c if op == "add" else val(x) - val(y) - c
            reg[d] = v & M32
            cf = (v >> 32 != 0) if op == "add" else (v < 0)
            cf = int(cf) if cout else None
        elif op == "and":
            reg[i[1]] = val(i[2]) & val(i[3])
        elif op == "setne":
            reg[i[1]] = val(i[2]) != 0
        elif op == "selp":
            reg[i[1]] = val(i[2]) if reg[i[4]] else val(i[3])
    return [reg[f"r{i}"] for i in range(n)]


def check_chains(trials):
    rng = random.Random(2)
    for name, (p, n) in FIELDS.items():
        edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2]
        pairs = [(x, y) for x in edge for y in edge] + [(rng.randrange(p), rng.randrange(p)) for _ in range(trials)]
        val = lambda w: sum(x << (32 * k) for k, x in enumerate(w))
        for kind, want in (("add", lambda x, y: (x + y) % p), ("sub", lambda x, y: (x - y) % p)):
            ins = chain_program(kind, p, n)
            for x, y in pairs:
                got = val(run_chain(ins, words(x, n), words(y, n), n))
                if got != want(x, y):
                    raise SystemExit(f"{name} {kind}: {x:#x}, {y:#x}: got {got:#x}")
        ins = chain_program("reduce", p, n)
        for x, _ in pairs + [(p, 0), (2 * p - 1, 0), (p + 1, 0)]:
            t = x if x >= p or x < 0 else x + (p if rng.random() < 0.5 else 0)
            got = val(run_chain(ins, words(t, n), [0] * n, n))
            if got != t % p:
                raise SystemExit(f"{name} reduce: {t:#x}: got {got:#x}")
        print(f"{name}: add, sub and reduce exact on {len(pairs)} pairs", file=sys.stderr)


CHAIN_PTX = {("add", False, True): "add.cc.u32", ("add", True, True): "addc.cc.u32",
             ("add", True, False): "addc.u32", ("add", False, False): "add.u32",
             ("sub", False, True): "sub.cc.u32", ("sub", True, True): "subc.cc.u32",
             ("sub", True, False): "subc.u32", ("sub", False, False): "sub.u32"}


def emit_chain(kind, name, p, n):
    ins = chain_program(kind, p, n)
    has_b = kind != "reduce"
    num = {f"r{i}": i for i in range(n)}
    if has_b:
        num.update({f"b{i}": n + i for i in range(n)})

    def o(x):
        if x.startswith("#"):
            return hex(int(x[1:]))
        return f"%{num[x]}" if x in num else f"pb_{x}"

    lines = ["{", f".reg .u32 pb_s<{n}>, pb_k<{n}>, pb_mask;", ".reg .pred pb_P;"]
    for i in ins:
        op = i[0]
        if op in ("add", "sub"):
            _, d, x, y, cin, cout = i
            lines.append(f"{CHAIN_PTX[(op, cin, cout)]} {o(d)}, {o(x)}, {o(y)};")
        elif op == "and":
            lines.append(f"and.b32 {o(i[1])}, {o(i[2])}, {o(i[3])};")
        elif op == "setne":
            lines.append(f"setp.ne.u32 {o(i[1])}, {o(i[2])}, 0;")
        elif op == "selp":
            lines.append(f"selp.b32 {o(i[1])}, {o(i[2])}, {o(i[3])}, {o(i[4])};")
    lines.append("}")
    args = "uint32_t *r, const uint32_t *b" if has_b else "uint32_t *r"
    out = [f"__device__ __forceinline__ void pb_{kind}_{name}({args}) {{", "  asm("]
    out += [f'      "{l}\\n\\t"' for l in lines]
    outs = ", ".join(f'"+r"(r[{i}])' for i in range(n))
    ins_ = ", ".join(f'"r"(b[{i}])' for i in range(n)) if has_b else ""
    out.append(f"      : {outs}")
    out.append(f"      : {ins_});")
    out.append("}")
    return "\n".join(out)


def run(blocks, a, b, n):
    """Executes the program on Python integers with PTX's semantics."""
    r = {}
    for i in range(n):
        r[f"a{i}"] = a[i]
        r[f"b{i}"] = b[i]
    for k in range(n + 1):
        r[f"A{k}"] = 0
    r["inv"] = (-pow(FIELDS_BY_N[n], -1, 1 << 32)) % (1 << 32)
    val = lambda x: int(x[1:]) if x.startswith("#") else r[x]
    for ch in blocks:
        cf = None  # the carry flag does not live between statements
        for ins in ch:
            op = ins[0]
            if op == "mov0":
                r[ins[1]] = 0
                continue
            if op in ("mullo", "mulhi"):
                prod = val(ins[2]) * val(ins[3])
                r[ins[1]] = prod & M32 if op == "mullo" else prod >> 32
                continue
            if op == "min":
                r[ins[1]] = min(val(ins[2]), val(ins[3]))
                continue
            if op == "sub":
                r[ins[1]] = (val(ins[2]) - val(ins[3])) & M32
                continue
            _, dst, x, y, z, cin = ins
            if cin and cf is None:
                raise ValueError(f"{ins}: carry in with no carry set in this statement")
            c = cf if cin else 0
            if op == "madlo":
                s = ((val(x) * val(y)) & M32) + val(z) + c
            elif op == "madhi":
                s = ((val(x) * val(y)) >> 32) + val(z) + c
            elif op == "addc":
                s = val(x) + val(y) + c
            elif op == "add":
                s = val(x) + val(y) + c
            r[dst] = s & M32
            cf = s >> 32
    return [r[f"A{k}"] for k in range(n)], r[f"A{n}"]


def check(trials=3000):
    rng = random.Random(1)
    for name, (p, n) in FIELDS.items():
        R = 1 << (32 * n)
        rinv = pow(R, -1, p)
        blocks = program(p, n)
        # 2^32 and 2^64 have a zero low word, so a row's A_0 (and m) is 0:
        # the case Fr's reduction without multiplies treats apart (c = 0).
        edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, R % p, (R * R) % p, 1 << 32, 1 << 64, M32]
        cases = [(x, y) for x in edge for y in edge] + [(rng.randrange(p), rng.randrange(p)) for _ in range(trials)]
        for x, y in cases:
            t, top = run(blocks, words(x, n), words(y, n), n)
            tv = sum(w << (32 * k) for k, w in enumerate(t))
            if top != 0 or tv >= 2 * p:
                raise SystemExit(f"{name}: bound broken for {x:#x}·{y:#x}: T = {tv:#x}, top {top}")
            got = tv - p if tv >= p else tv
            if got != x * y * rinv % p:
                raise SystemExit(f"{name}: {x:#x}·{y:#x} wrong")
        ninstr = sum(len(ch) for ch in blocks)
        print(f"{name}: {len(cases)} products exact, T < 2p; {ninstr} PTX instructions", file=sys.stderr)


PTX = {
    "madlo": ("mad.lo.cc.u32", "madc.lo.cc.u32"),
    "madhi": ("mad.hi.cc.u32", "madc.hi.cc.u32"),
    "addc": ("add.cc.u32", "addc.cc.u32"),
    "add": ("add.cc.u32", "addc.cc.u32"),
}


SCALARS = ("m", "inv", "c", "h", "d")
TWO_OPERAND = {"mullo": "mul.lo.u32", "mulhi": "mul.hi.u32", "min": "min.u32", "sub": "sub.u32"}


def cexpr(x):
    """The C expression of a register name: a3 → a[3], m → m."""
    return x if x in SCALARS else f"{x[0]}[{x[1:]}]"


def emit(name, p, n):
    blocks = program(p, n)
    inv_param = ", uint32_t inv" if n == 8 else ""
    out = [f"__device__ __forceinline__ void pb_mont_{name}(uint32_t *r, const uint32_t *a, const uint32_t *b{inv_param}) {{",
           f"  uint32_t A[{n + 1}], B[{n}], m{', h' if special_low(words(p, n)) else ''};",
           # c and d live only inside their statements (step 5: c makes h; d is for a carry alone)
           *(["  [[maybe_unused]] uint32_t c, d;"] if special_low(words(p, n)) else []),
           f"#pragma unroll\n  for (int k = 0; k <= {n}; k++) A[k] = 0;"]
    for ch in blocks:
        ins = [i for i in ch if i[0] != "mov0"]
        written, read = [], []
        for i in ins:
            srcs = i[2:4] if i[0] in TWO_OPERAND else i[2:5]
            for x in srcs:  # read: registers whose value comes from before the statement
                if x and not x.startswith("#") and cexpr(x) not in read and cexpr(x) not in written:
                    read.append(cexpr(x))
            if cexpr(i[1]) not in written:
                written.append(cexpr(i[1]))
        inputs = [c for c in read if c not in written]
        num = {c: k for k, c in enumerate(written + inputs)}
        o = lambda x: hex(int(x[1:])) if x.startswith("#") else f"%{num[cexpr(x)]}"
        lines = []
        for k, i in enumerate(ins):
            op = i[0]
            if op in TWO_OPERAND:
                lines.append(f"{TWO_OPERAND[op]} {o(i[1])}, {o(i[2])}, {o(i[3])};")
                continue
            _, dst, x, y, z, cin = i
            mnem = PTX[op][1 if cin else 0]
            if k == len(ins) - 1:  # nothing reads the last carry
                mnem = mnem.replace(".cc", "")
            if op in ("madlo", "madhi"):
                lines.append(f"{mnem} {o(dst)}, {o(x)}, {o(y)}, {o(z)};")
            else:
                lines.append(f"{mnem} {o(dst)}, {o(x)}, {o(y)};")
        cons_out = ", ".join(f'"{"+r" if c in read else "=r"}"({c})' for c in written)
        cons_in = ", ".join(f'"r"({c})' for c in inputs)
        text = "\n".join(f'      "{l}\\n\\t"' for l in lines)
        out.append(f"  asm(\n{text}\n      : {cons_out}\n      : {cons_in});")
        if ch[-1][0] == "mov0":
            out.append(f"  A[{n}] = 0;")
    out.append(f"#pragma unroll\n  for (int k = 0; k < {n}; k++) r[k] = A[k];")
    out.append("}")
    return "\n".join(out)


def main():
    if "--check" in sys.argv:
        check()
        check_chains(3000)
        return
    check(300)
    check_chains(300)
    print("// mont_ptx.cuh — generated by cuda/gen/mont_ptx.py; do not edit.")
    print("// pb_mont_fp / pb_mont_fr: r[0..N−1] = a·b·2^(−32N) + k·p for some k, below 2p;")
    print("// the caller subtracts p once (pb_reduce_*). pb_add_* / pb_sub_*: r = r ± b mod p")
    print("// for r, b < p; pb_reduce_*: r mod p for r < 2p; each one carry chain.")
    print("// See the generator for how.")
    print("#pragma once\n#include <stdint.h>\n")
    print("#if defined(__CUDACC__)")
    for name, (p, n) in FIELDS.items():
        print(emit(name, p, n))
        print()
        for kind in ("add", "sub", "reduce"):
            print(emit_chain(kind, name, p, n))
            print()
    print("#endif")


if __name__ == "__main__":
    main()
