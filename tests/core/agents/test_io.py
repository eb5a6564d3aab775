"""Agent sets: our format, the reference importer, bundled conversions and located errors."""
from pathlib import Path

import pytest

from core.agents.io import dumps_agent_set, load_agent_set, loads_agent_set, save_agent_set
from core.agents.reference import import_reference_agents, reference_agents_from_text
from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind
from core.base.errors import ConfigError
from tests.support.maps import ROOT

SIZES = {"easy": (8, 10, 15), "medium": (9, 12, 18), "hard": (10, 14, 18), "expert": (11, 14, 18),
         "transfer": (10, 14, 18)}
SPLITS = ("train", "val", "test")


def line_of(text: str, needle: str) -> int:
    return next(i + 1 for i, line in enumerate(text.splitlines()) if needle in line)


def test_reference_files_import_with_expected_sizes(reference_configs):
    for mode, sizes in SIZES.items():
        for split, n in zip(SPLITS, sizes):
            agents = import_reference_agents(reference_configs / f"master/config/agents/{mode}/{split}.yaml")
            assert len(agents) == n, (mode, split)
            assert agents.agents[0].kind is Kind.CAR and agents.agents[0].name == "Car_1"
            assert all(a.priority == 0 for a in agents if a.kind is Kind.PEDESTRIAN)
    for mode, sizes in (("easy", (12, 14, 14)), ("hard", (12, 14, 14)), ("demo", (4, 4, 4))):
        for split, n in zip(SPLITS, sizes):
            assert len(import_reference_agents(reference_configs / f"vis/config/agents/Vis/{mode}/{split}.yaml")) == n


def test_reference_content_details(reference_configs):
    medium = import_reference_agents(reference_configs / "master/config/agents/medium/test.yaml")
    assert [a.concepts for a in medium if a.name == "Car_5"] == [("tiro", "bus")]
    assert {a.size for a in medium if a.kind is Kind.CAR} == {2}
    hard = import_reference_agents(reference_configs / "master/config/agents/hard/test.yaml")
    assert {a.size for a in hard if a.kind is Kind.CAR} == {1}
    expert = import_reference_agents(reference_configs / "master/config/agents/expert/test.yaml")
    concepts = {c for a in expert for c in a.concepts}
    assert concepts == {"old", "young", "ambulance", "bus", "police", "tiro", "reckless"}
    table = expert.table()
    text = (reference_configs / "master/config/agents/expert/test.yaml").read_text(encoding="utf-8")
    assert table.names[0] == "Car_1" and table.concepts["young"].sum() == text.count("young: 1.0")


def test_vis_nav_files_equal_master(reference_configs):
    for mode in ("easy", "medium", "hard", "expert"):
        for split in SPLITS:
            a = import_reference_agents(reference_configs / f"master/config/agents/{mode}/{split}.yaml")
            b = import_reference_agents(reference_configs / f"vis/config/agents/Nav/{mode}/{split}.yaml")
            assert a == b


def test_bundled_files_equal_a_fresh_conversion(reference_configs):
    from tools.convert_reference import conversions

    produced = conversions(reference_configs)
    assert len(produced) == 1 + 15 + 9
    for rel, text in produced.items():
        assert (ROOT / rel).read_text(encoding="utf-8") == text, rel


def test_round_trip_reference_ours_save_load(reference_configs, tmp_path):
    for path in sorted(reference_configs.glob("*/config/agents/**/*.yaml")):
        ref = import_reference_agents(path)
        out = tmp_path / "a.yaml"
        save_agent_set(ref, out)
        again = load_agent_set(out)
        assert again == ref and again.source == str(out)
        assert dumps_agent_set(again) == out.read_text(encoding="utf-8")


def test_bundled_agent_sets_load():
    files = sorted((ROOT / "configs" / "agents").glob("**/*.yaml"))
    assert len(files) == 24
    for f in files:
        assert len(load_agent_set(f)) >= 4


def test_defaults_and_empty_set():
    s = loads_agent_set("agents:\n- {type: Pedestrian, id: 3}\n- {type: Car, id: 1}\n")
    assert s.agents == (AgentSpec(Kind.PEDESTRIAN, 3, 0), AgentSpec(Kind.CAR, 1, 1))
    assert loads_agent_set(dumps_agent_set(AgentSet(()))) == AgentSet(())


def test_bus_class_becomes_a_car_with_the_bus_concept():
    text = ("agents:\n- class: Bus\n  id: 4\n  size: 2\n  gplanner: A*vg\n  concepts:\n    type: Car\n"
            "    priority: 2\n    no.: 61A\n")
    s = reference_agents_from_text(text, "bus.yaml")
    assert s.agents == (AgentSpec(Kind.CAR, 4, 2, ("bus",), 2),)


# ------------------------------------------------------------------ errors in our format
BASE = """version: 1
agents:
- {type: Car, id: 1, priority: 1, concepts: [ambulance]}
- {type: Pedestrian, id: 1, concepts: [old]}
- {type: Car, id: 2, priority: 3}
"""


@pytest.mark.parametrize("old,new,line,words", [
    ("id: 2, priority: 3", "id: two, priority: 3", 5, "'id' must be int"),
    ("type: Car, id: 2", "type: Truck, id: 2", 5, "'Pedestrian' or 'Car'"),
    ("concepts: [old]", "concepts: [grumpy]", 4, "unknown concept 'grumpy'"),
    ("concepts: [old]", "concepts: [ambulance]", 4, "applies to cars, not pedestrians"),
    ("type: Car, id: 2", "type: Car, id: 1", 5, "duplicate agent Car_1 (first defined as agent #1, line 3)"),
    ("id: 1, concepts: [old]", "id: 1, priority: 2, concepts: [old]", 4, "pedestrians always have priority 0"),
    ("id: 2, priority: 3", "id: 2, priority: -3", 5, "must not be negative"),
    ("id: 2, priority: 3", "id: 2, priority: 0", 5, "car priority must be at least 1"),
    ("concepts: [old]", "concepts: [old, old]", 4, "listed twice"),
    ("id: 2, priority: 3", "id: 2, priority: 3, size: 0", 5, "size must be at least 1"),
    ("id: 2, priority: 3", "id: 2, prio: 3", 5, "unknown key 'prio'"),
    ("concepts: [old]", "concepts: old", 4, "'concepts' must be list"),
    ("- {type: Car, id: 2, priority: 3}", "- {type: Car, id: 2, priority: 3}\n- 7", 6, "must be a mapping"),
])
def test_errors_name_file_and_line(tmp_path: Path, old, new, line, words):
    text = BASE.replace(old, new)
    assert text != BASE
    path = tmp_path / "agents.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_agent_set(path)
    err = info.value
    assert err.file == str(path) and err.line == line, str(err)
    assert words in err.message, err.message


def test_top_level_errors(tmp_path):
    with pytest.raises(ConfigError) as info:
        loads_agent_set("version: 2\nagents: []\n", "a.yaml")
    assert info.value.line == 1 and "version 2" in info.value.message
    with pytest.raises(ConfigError) as info:
        loads_agent_set("agents: []\npeople: 3\n", "a.yaml")
    assert info.value.line == 2
    with pytest.raises(ConfigError, match="must be a mapping"):
        loads_agent_set("- 1\n", "a.yaml")


# ------------------------------------------------------------------ errors in reference files
REF = """agents:
- class: Private_car
  id: 1
  size: 2
  gplanner: A*vg
  concepts:
    type: Car
    priority: 1
    ambulance: 1.0
- class: Pedestrian
  id: 1
  size: 1
  gplanner: A*
  concepts:
    type: Pedestrian
    priority: 0
    old: 1.0
"""


@pytest.mark.parametrize("old,new,line,words", [
    ("class: Pedestrian", "class: Cyclist", 10, "unknown class 'Cyclist'"),
    ("type: Pedestrian", "type: Car", 15, "does not match class 'Pedestrian'"),
    ("gplanner: A*\n", "gplanner: A*vg\n", 13, "not supported for Pedestrian"),
    ("old: 1.0", "ambulance: 1.0", 17, "applies to cars, not pedestrians"),
    ("old: 1.0", "sleepy: 1.0", 17, "unknown concept 'sleepy'"),
    ("old: 1.0", "old: yes", 17, "must be a number"),
    ("priority: 0", "priority: 4", 16, "pedestrians always have priority 0"),
    ("class: Pedestrian\n  id: 1\n  size: 1\n  gplanner: A*\n",
     "class: Private_car\n  id: 2\n  size: 1\n  gplanner: A*vg\n", 15, "does not match class 'Private_car'"),
    ("  id: 1\n  size: 1", "  id: one\n  size: 1", 11, "'id' must be int"),
])
def test_reference_errors_are_located(old, new, line, words):
    text = REF.replace(old, new)
    assert text != REF
    with pytest.raises(ConfigError) as info:
        reference_agents_from_text(text, "ref.yaml")
    err = info.value
    assert err.file == "ref.yaml" and words in err.message, err.message
    assert err.line == line, str(err)


def test_reference_duplicate_ids():
    text = REF + REF.split("\n", 1)[1].split("- class: Pedestrian")[0]
    with pytest.raises(ConfigError, match="duplicate agent Car_1") as info:
        reference_agents_from_text(text, "ref.yaml")
    assert info.value.line == 19


def test_huge_priority_is_a_located_error():
    text = "version: 1\nagents:\n- {type: Car, id: 1, priority: 3000000000}\n- {type: Pedestrian, id: 1}\n"
    with pytest.raises(ConfigError) as ei:
        loads_agent_set(text, "agents.yaml")
    assert ei.value.file == "agents.yaml" and ei.value.line == 3 and "at most 1000000" in ei.value.message
    loads_agent_set(text.replace("3000000000", "1000000"), "agents.yaml")
