"""``main.py icons …`` end to end (in-process) on the tiny offline pipeline and a temporary data folder."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from core.cli import run_cli
from core.render.library import IconLibrary

pytestmark = pytest.mark.usefixtures("icon_user_data")


def test_generate_list_accept_reject(tiny_sd_model, tmp_path, capsys):
    rc = run_cli(["icons", "generate", "--model", str(tiny_sd_model), "--semantic", "Ambulance", "--n", "3",
                  "--steps", "2", "--seed", "100", "--batch", "2", "--prompt", "white van", "--prompt", "red van"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "seeds 100..102" in out.out and out.out.count("saved ambulance/") == 3
    assert "step 2/2" in out.err  # per-step progress
    lib = IconLibrary(tmp_path / "userdata" / "icons")
    recs = lib.list("ambulance")
    assert [r.seed for r in recs] == [100, 101, 102]
    assert recs[0].prompt.startswith("white van, ") and recs[1].prompt.startswith("red van, ")
    assert run_cli(["icons", "accept", recs[0].id, recs[2].id]) == 0
    assert run_cli(["icons", "reject", recs[1].id]) == 0
    capsys.readouterr()
    assert run_cli(["icons", "list", "--status", "accepted", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in listed] == [recs[0].id, recs[2].id]
    assert run_cli(["icons", "show", recs[1].id]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "rejected" and shown["seed"] == 101 and shown["steps"] == 2
    assert run_cli(["icons", "sheet", "--out", str(tmp_path / "sheet.png")]) == 0
    assert "1 semantic(s) from the library" in capsys.readouterr().out
    assert Image.open(tmp_path / "sheet.png").size[0] > 500


def test_generate_accept_flag_and_configured_model(tiny_sd_model, tmp_path, capsys):
    assert run_cli(["icons", "set-model", str(tiny_sd_model)]) == 0
    assert run_cli(["icons", "model"]) == 0
    assert "StableDiffusionPipeline" in capsys.readouterr().out
    assert run_cli(["icons", "generate", "--semantic", "crossing", "--n", "1", "--steps", "1", "--accept",
                    "--quiet"]) == 0
    rec = IconLibrary(tmp_path / "userdata" / "icons").list("crossing")[0]
    assert rec.status == "accepted" and rec.meta["post"] == "tile"
    assert run_cli(["icons", "set-model", "--clear"]) == 0


def test_no_model_explains_how_to_configure_one(capsys):
    assert run_cli(["icons", "generate", "--semantic", "bus"]) == 1
    err = capsys.readouterr().err
    assert "No text-to-image model is configured" in err and "--model PATH" in err
    assert run_cli(["icons", "model"]) == 1


def test_user_errors(tmp_path, capsys):
    assert run_cli(["icons", "generate", "--semantic", "spaceship", "--model", str(tmp_path)]) == 2
    assert "unknown semantic" in capsys.readouterr().err
    assert run_cli(["icons", "accept", "bus/does-not-exist"]) == 1
    assert "no icon" in capsys.readouterr().err
    assert run_cli(["icons", "generate", "--semantic", "bus", "--model", str(tmp_path / "none")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_import_and_prompts(tmp_path, capsys):
    png = tmp_path / "mine.png"
    Image.new("RGBA", (10, 20), (1, 2, 3, 255)).save(png)
    assert run_cli(["icons", "import", "police", str(png)]) == 0
    assert IconLibrary(tmp_path / "userdata" / "icons").accepted("police")
    assert run_cli(["icons", "prompts", "--semantic", "old"]) == 0
    assert "cane" in capsys.readouterr().out
    assert run_cli(["icons", "prompts", "--edit"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.is_file() and path.is_relative_to(tmp_path / "userdata")


def test_list_and_show_name_bad_sidecars(tmp_path, capsys):
    folder = tmp_path / "userdata" / "icons" / "walking_street"
    folder.mkdir(parents=True)
    for stem, text in (("x1", '{"seed": "abc"}'), ("x2", "{ oops")):
        Image.new("RGBA", (8, 8)).save(folder / f"{stem}.png")
        (folder / f"{stem}.json").write_text(text)
    assert run_cli(["icons", "list"]) == 0  # a bad sidecar is a warning, not a traceback
    out = capsys.readouterr()
    assert f"warning: {folder / 'x1.json'}: field 'seed'" in out.out
    assert f"warning: {folder / 'x2.json'}: unreadable sidecar (not valid JSON" in out.out
    assert "2 icon(s) with a sidecar problem" in out.err
    assert run_cli(["icons", "list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["walking_street/x1"]["seed"] is None and "'seed'" in rows["walking_street/x1"]["sidecar_error"]
    assert run_cli(["icons", "show", "walking_street/x1"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == {"seed": "abc"} and "'seed'" in out.err
    assert run_cli(["icons", "list", "--semantic", "spaceship"]) == 1
    assert run_cli(["icons", "prompts", "--semantic", "spaceship"]) == 2
    assert run_cli(["icons", "import", "spaceship", str(folder / "x1.png")]) == 1
    assert capsys.readouterr().err.count("unknown semantic") == 3


def test_download_without_network_is_one_line(tmp_path, capsys, monkeypatch):
    import huggingface_hub

    def offline(self, repo, *a, **k):
        raise ConnectionError("[Errno -2] Name or service not known")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_files", offline)
    assert run_cli(["icons", "download", "foo/bar", "--out", str(tmp_path / "dl")]) == 1
    err = capsys.readouterr().err
    assert "error: could not download foo/bar: cannot reach the Hugging Face Hub" in err and "Traceback" not in err


def test_download_problem_names_http_library_errors():
    from core.cli.icons import download_problem

    ConnectError = type("ConnectError", (Exception,), {"__module__": "httpx._exceptions"})
    assert "cannot reach the Hugging Face Hub (ConnectError: no route)" in download_problem(ConnectError("no route"))
    assert download_problem(ValueError("odd")) == "ValueError: odd"


@pytest.mark.parametrize("out, expect", [("{tmp}", "is a folder"), ("{tmp}/s.xyz", "unknown image file extension"),
                                         ("{tmp}/afile/s.png", "is a file")])
def test_sheet_output_is_checked_first(tmp_path, capsys, out, expect):
    (tmp_path / "afile").write_text("x")
    out = out.replace("{tmp}", str(tmp_path))
    assert run_cli(["icons", "sheet", "--out", out]) == 2
    err = capsys.readouterr().err
    assert expect in err and "Traceback" not in err
