"""The fixed-seed slice of the loader fuzzer (``make fuzz`` runs >= 10,000 inputs per family; see docs/fuzzing.md):
a few seconds per family inside ``make test``, so the crash classes found by fuzzing stay fixed. A crash is any
exception that is not a LogiCityError; a hang an input taking longer than the limit."""
from __future__ import annotations

import time
import warnings

import pytest

from core.base.errors import ConfigError
from tools.fuzz.families import FAMILIES, Family, prepare
from tools.fuzz.runner import make_input, run_family, run_one

SLICE_SEED = 20261201
#: seconds after which a slice input is a hang: generous, so a loaded CI machine never turns a slow rejection into a
#: failure (make fuzz uses 10 s; a real hang never ends)
HANG_LIMIT = 30.0
#: inputs per family in the suite: a few seconds each on a 2-core machine
SLICE = {"rules": 300, "maps": 60, "agents": 150, "ontologies": 80, "modes": 80, "projects": 80, "episodes": 200,
         "policies": 300}


#: Families whose slice still finds a crash class that another change is fixing: family -> reason (xfail, not
#: strict, so the fix turns them green). Empty: every family is clean.
KNOWN: dict[str, str] = {}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    w = tmp_path_factory.mktemp("fuzz")
    prepare(w)
    return w


def test_every_loader_family_has_a_slice():
    assert set(SLICE) == set(FAMILIES) == {"rules", "maps", "agents", "ontologies", "modes", "projects", "episodes",
                                           "policies"}


@pytest.mark.parametrize("family", [pytest.param(f, marks=pytest.mark.xfail(reason=KNOWN[f], strict=False))
                                    if f in KNOWN else f for f in sorted(SLICE)])
def test_fuzz_slice(family, work):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = run_family(family, SLICE[family], SLICE_SEED, timeout=HANG_LIMIT, work=work)
    found = "\n".join(f"{f.kind} x{f.count}: {f.signature}: {f.message} (input #{f.index}; replay: python -m "
                      f"tools.fuzz --family {family} --seed {SLICE_SEED} ...)" for f in report.findings)
    assert report.crashes == 0 and report.hangs == 0, found
    assert report.inputs == SLICE[family]
    assert report.accepted > 0 and report.rejected > 0   # the inputs reach both outcomes: the fuzzer gets deep


def test_inputs_are_reproducible_from_their_index(work):
    fam = FAMILIES["maps"]
    seeds = fam.seeds(work)
    assert make_input(fam, seeds, 7, 123) == make_input(fam, seeds, 7, 123)
    assert make_input(fam, seeds, 7, 123) != make_input(fam, seeds, 7, 124)


def test_the_harness_tells_crashes_rejections_and_hangs_apart(work):
    def target(data, ext, w):
        if data == b"crash":
            raise ValueError("not a located error")
        if data == b"reject":
            raise ConfigError("bad input", "f.yaml", 3)
        if data == b"hang":
            t = time.perf_counter()
            while time.perf_counter() - t < 5:
                pass

    fam = Family("fake", "text", lambda w: [], target)
    assert run_one(fam, ".x", b"crash", work, 2.0)[0] == "crash"
    assert run_one(fam, ".x", b"reject", work, 2.0)[0] == "rejected"
    assert run_one(fam, ".x", b"fine", work, 2.0)[0] == "ok"
    outcome, _, seconds = run_one(fam, ".x", b"hang", work, 0.5)
    assert outcome == "hang" and seconds < 3
