"""Input limits: what a bad or huge input costs before it is answered.

Run: ``.venv/bin/python bench/limits.py``. Prints, for each case, wall time and peak traced memory (tracemalloc:
Python and numpy allocations):

* many-variable clauses in the compiled engine: a chain of m variables (join width 2) and a clique (width m),
  200 egos with up to K entities in view, evaluated variable by variable (core/logic/engines/joins.py) — and the dense
  truth values one broadcast over all the variables would need, for comparison;
* rule texts: a syntax error on line 2 of a text at the size limit, a valid text at the limit, a 5 MB text;
* a crafted episode whose positions header claims 2^40 rows, and a meta.json nested 200 000 levels deep.
"""
from __future__ import annotations

import io
import sys
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.base.errors import LogiCityError  # noqa: E402
from core.logic.engines.compiled import CompiledEngine  # noqa: E402
from core.logic.grounding.grounder import TableInterpretation  # noqa: E402
from core.logic.lang.ontology import load_ontology  # noqa: E402
from core.logic.lang.parser import MAX_RULE_CHARS  # noqa: E402
from core.logic.lang.program import parse_program, parse_rules  # noqa: E402
from core.sim.episode import load_episode  # noqa: E402

ONTO = load_ontology(ROOT / "configs" / "ontologies" / "full.yaml")


def measure(label: str, fn: Callable[[], Any]) -> None:
    tracemalloc.start()
    t = time.perf_counter()
    try:
        fn()
        out = "ok"
    except LogiCityError as exc:
        out = f"refused: {exc.message[:70]}"
    dt = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"  {label:<48} {dt * 1000:9.1f} ms  {peak:8.1f} MiB peak  {out}")


def tables(egos: int, k: int, seed: int = 0) -> TableInterpretation:
    rng = np.random.default_rng(seed)
    valid = np.ones((egos, k), bool)
    unary = {p.name: rng.random((egos, k)) < 0.5 for p in ONTO.unary}
    binary = {p.name: rng.random((egos, k, k)) < 0.3 for p in ONTO.binary}
    return TableInterpretation(ONTO, valid, unary, binary)


def clause(m: int, clique: bool) -> str:
    vs = [f"V{i}" for i in range(m)]
    pairs = [(a, b) for i, a in enumerate(vs) for b in vs[i + 1:]] if clique else list(zip(vs, vs[1:]))
    body = ["IsClose(X, V0)"] + [f"IsClose({a}, {b})" for a, b in pairs] + [f"Not(IsCar({v}))" for v in vs[::2]]
    return f"Stop(X) :- {', '.join(body)}.\n"


def main() -> None:
    print("many-variable clauses (compiled engine, 200 egos):")
    for m, k, clique in [(11, 7, False), (16, 12, False), (64, 12, False), (6, 12, True), (8, 12, True)]:
        kind = "clique" if clique else "chain"
        dense = 200 * k ** m
        try:
            eng = CompiledEngine(parse_program(clause(m, clique), ONTO, "bench.rules"))
        except LogiCityError as exc:
            print(f"  {kind} m={m:<2} K={k:<2} (dense would be {dense:.1e} values)  refused when built: "
                  f"{exc.message[:60]}")
            continue
        interp = tables(200, k)
        measure(f"{kind} m={m} K={k} (dense: {dense:.1e} values)", lambda eng=eng, interp=interp: eng.decide(interp))
    print("rule texts:")
    good = "Stop(X) :- IsClose(X, Y), IsCar(Y), Not(IsOld(Y)).\n"
    at_limit = good * ((MAX_RULE_CHARS - 100) // len(good))
    measure(f"error on line 2, {MAX_RULE_CHARS // 1000} kB text", lambda: parse_rules(good + "Stop(X) :- ,\n" + at_limit,
                                                                                   ONTO, "b.rules"))
    measure(f"valid {MAX_RULE_CHARS // 1000} kB text", lambda: parse_rules(at_limit, ONTO, "b.rules"))
    measure("5 MB text", lambda: parse_rules(good * (5_000_000 // len(good)), ONTO, "b.rules"))
    print("crafted episodes:")
    with tempfile.TemporaryDirectory() as tmp:
        def write(name: str, members: dict[str, bytes]) -> Path:
            p = Path(tmp) / name
            with zipfile.ZipFile(p, "w") as zf:
                for k, v in members.items():
                    zf.writestr(k, v)
            return p

        b = io.BytesIO()
        np.lib.format.write_array_header_1_0(b, {"descr": "<i2", "fortran_order": False, "shape": (2**40, 8, 2)})
        huge = write("huge.npz", {"meta.json": b'{"format": "logicity-episode"}', "positions.npy": b.getvalue()})
        measure("positions header of 2^40 rows", lambda: load_episode(huge))
        nested = write("nested.npz", {"meta.json": b"[" * 200_000 + b"]" * 200_000})
        measure("meta.json nested 200 000 levels", lambda: load_episode(nested))


if __name__ == "__main__":
    main()
