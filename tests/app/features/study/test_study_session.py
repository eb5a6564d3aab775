"""The Study menu end to end: a simulated participant runs a whole session with real key presses in the runner
window, then the results view shows the answers; New Study makes a study through the designer dialog and a job."""
from __future__ import annotations

import pytest

from tests.support.studio import close_window, open_window
from tests.support.study import make_small_study

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

Key = QtCore.Qt.Key


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    return make_small_study(tmp_path_factory.mktemp("gui_study") / "study", questions=8)


def _menu_action(win, menu_title: str, text: str):
    for a in win.window.menuBar().actions():
        if a.menu() is not None and a.text().replace("&", "") == menu_title:
            for sub in a.menu().actions():
                if sub.text().replace("&", "") == text:
                    return sub
    raise AssertionError(f"no {menu_title} ▸ {text}")


def test_dry_session_with_a_simulated_participant(qtbot, tmp_path, study_dir):
    from core.study.design import load_study, participant_order
    from core.study.journal import read_journal

    study = load_study(study_dir)
    win = open_window(qtbot, tmp_path / "s.ini", path=None)
    try:
        ctl = win.features["study"]
        ctl.full_screen = False
        ctl.pick_folder = lambda title: str(study_dir)
        _menu_action(win, "Study", "Run Participant Session…").trigger()
        qtbot.waitUntil(lambda: len(ctl.runners) == 1)
        r = ctl.runners[0]
        qtbot.waitExposed(r)
        assert r.stack.currentWidget() is r.login_page
        qtbot.keyClicks(r.pid, "SIM01")
        qtbot.keyClick(r.pid, Key.Key_Return)                       # I agree
        qtbot.waitUntil(lambda: r.session is not None)
        assert r.stack.currentWidget() is r.instructions_page
        qtbot.keyClick(r, Key.Key_Space)                            # start
        training = study.by_role("training")
        for q in training:
            assert r.stack.currentWidget() is r.item_page
            assert r.scene.text() == q.description and q.truth_word in r.answer_label.text()
            assert not r.options["A"].isVisible()                   # a document, not a question
            qtbot.keyClick(r, Key.Key_Space)
        practice = study.by_role("practice")
        for k, q in enumerate(practice):
            assert r.stage_label.text() == f"Practice question {k + 1} of {len(practice)}"
            assert r.answer_label.text() == ""
            wrong = "ABCD"[(q.truth + 1) % 4]
            qtbot.keyClick(r, getattr(Key, f"Key_{wrong if k == 0 else q.truth_letter}"))
            assert ("Not quite." if k == 0 else "Correct.") in r.answer_label.text()   # feedback
            assert f"the answer is {q.truth_letter}" in r.answer_label.text()
            qtbot.keyClick(r, Key.Key_Space)
        order = participant_order(study, "SIM01")
        keys = {"A": Key.Key_1, "B": Key.Key_2, "C": Key.Key_3, "D": Key.Key_4}
        given = {}
        for k, qid in enumerate(order):
            q = study.question(qid)
            assert r.stage_label.text() == f"Question {k + 1} of {len(order)}"
            assert r.progress.value() == k and r.progress.maximum() == len(order)
            assert r.scene.text() == q.description
            assert r.answer_label.text() == ""                         # never an answer during the test
            if k == 2:                                                 # pause and resume with the P key
                qtbot.keyClick(r, Key.Key_P)
                assert r.stack.currentWidget() is r.paused_page
                qtbot.keyClick(r, Key.Key_1)                           # ignored while paused
                qtbot.keyClick(r, Key.Key_P)
                assert r.stack.currentWidget() is r.item_page
            letter = q.truth_letter if k % 2 == 0 else "D"
            given[qid] = letter
            if k % 3 == 0:
                qtbot.keyClick(r, keys[letter])                        # digits 1-4
            else:
                qtbot.keyClick(r, getattr(Key, f"Key_{letter}"))       # letters A-D
            answers = {x["question"]: x for x in read_journal(study.responses_dir / "SIM01.jsonl")
                       if x.get("kind") == "answer" and x["phase"] == "test"}
            assert answers[qid]["answer"] == letter                    # on disk before the next question shows
        assert r.stack.currentWidget() is r.done_page
        assert win.last_message == "participant SIM01 finished"
        recs = read_journal(study.responses_dir / "SIM01.jsonl")
        test = [x for x in recs if x.get("kind") == "answer" and x["phase"] == "test"]
        assert [x["question"] for x in test] == order and all(x["rt_ms"] >= 0 for x in test)
        assert {x["question"]: x["answer"] for x in test} == given
        qtbot.keyClick(r, Key.Key_Escape)                              # closes the finished session
        qtbot.waitUntil(lambda: not ctl.runners)

        _menu_action(win, "Study", "Study Results…").trigger()
        qtbot.waitUntil(lambda: len(ctl.results) == 1)
        view = ctl.results[0]
        t = view.table
        names = [t.item(i, 0).text() for i in range(t.rowCount())]
        assert names == ["SIM01", "Humans (pooled)"]
        right = sum(1 for qid, l in given.items() if l == study.question(qid).truth_letter)
        overall = t.item(0, 5).text()
        assert overall == f"{100 * right / len(order):.1f}"
        assert "n/a" in view.kappa.text()                              # one rater: no kappa
        total = sum(int(view.confusion.item(i, j).text()) for i in range(4) for j in range(5))
        assert total == len(order)
        out = tmp_path / "long.csv"
        ctl.pick_save = lambda title, f: str(out)
        qtbot.mouseClick(view.findChild(QtWidgets.QPushButton, "export_csv"), QtCore.Qt.MouseButton.LeftButton)
        assert len(out.read_text().splitlines()) == len(order) + 1
        view.grab().save(str(tmp_path / "results.png"))
        view.close()
    finally:
        close_window(win)


def test_new_study_through_the_designer_dialog(qtbot, tmp_path):
    from core.study.design import load_study

    win = open_window(qtbot, tmp_path / "s.ini", path=None)
    try:
        ctl = win.features["study"]
        _menu_action(win, "Study", "New Study…").trigger()
        from widgets.study.designer import StudyDesignerDialog

        qtbot.waitUntil(lambda: win.window.findChild(StudyDesignerDialog) is not None)
        dlg = win.window.findChild(StudyDesignerDialog)
        ok = dlg.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
        assert not ok.isEnabled()                                      # no folder yet
        dlg.seeds.setText("0")
        dlg.steps.setValue(60)
        dlg.questions.setValue(4)
        dlg.practice.setValue(0)
        dlg.training.setValue(4)
        dlg.folder.setText(str(tmp_path / "new_study"))
        assert ok.isEnabled(), dlg.problem.text()
        with qtbot.waitSignal(ctl.made, timeout=120_000):
            qtbot.mouseClick(ok, QtCore.Qt.MouseButton.LeftButton)
        st = load_study(tmp_path / "new_study")
        assert len(st.test) == 4 and len(st.by_role("training")) == 4
    finally:
        close_window(win)


def test_designer_offers_a_vap_dataset_source(qtbot, tmp_path):
    from widgets.study.designer import StudyDesignerDialog

    dlg = StudyDesignerDialog(["configs/modes/vap_hard.yaml"])
    qtbot.addWidget(dlg)
    ok = dlg.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
    dlg.folder.setText(str(tmp_path / "s"))
    assert ok.isEnabled()
    dlg.source_kind.setCurrentIndex(dlg.source_kind.findData("vap"))
    assert not dlg.seeds.isEnabled() and dlg.dataset.isEnabled()
    assert not ok.isEnabled() and "VAP dataset" in dlg.problem.text()
    dlg.dataset.setText(str(tmp_path))                      # no dataset_info.json there
    assert not ok.isEnabled() and "not a VAP dataset" in dlg.problem.text()


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_runner_resumes_after_closing_and_times_out(qtbot, tmp_path):
    """Close the runner mid-test, reopen as the same participant: a welcome-back note, then the next unanswered
    question; with a time limit, a question left alone is committed as a time-out by the window's timer."""
    import dataclasses

    from core.study.design import load_study, participant_order
    from core.study.journal import read_journal
    from widgets.study.runner import StudyRunnerWindow

    study = load_study(make_small_study(tmp_path / "st", questions=4))
    study.spec = dataclasses.replace(study.spec, time_limit_s=5.0, practice=0)
    clock = _Clock()

    def start(pid: str):
        r = StudyRunnerWindow(study, clock=clock)
        qtbot.addWidget(r)
        r.show()
        qtbot.waitExposed(r)
        qtbot.keyClicks(r.pid, pid)
        qtbot.keyClick(r.pid, Key.Key_Return)
        qtbot.waitUntil(lambda: r.session is not None)
        return r

    r = start("R9")
    qtbot.keyClick(r, Key.Key_Space)                                  # instructions
    while r.session.stage == "training":
        qtbot.keyClick(r, Key.Key_Space)
    while r.session.stage in ("practice", "feedback"):
        qtbot.keyClick(r, Key.Key_1 if r.session.stage == "practice" else Key.Key_Space)
    order = participant_order(study, "R9")
    assert r.session.current().id == order[0]
    qtbot.keyClick(r, Key.Key_C)
    r.close()                                                         # the participant walks away
    r2 = start("R9")
    assert r2.stack.currentWidget() is r2.instructions_page and "answered 1 of 4" in r2.resume_note.text()
    qtbot.keyClick(r2, Key.Key_2)                                     # ignored: no question on screen yet
    qtbot.keyClick(r2, Key.Key_Space)
    assert r2.stack.currentWidget() is r2.item_page and r2.stage_label.text() == "Question 2 of 4"
    clock.t += 6.0                                                    # time runs out on question 2
    qtbot.waitUntil(lambda: r2.stage_label.text() == "Question 3 of 4", timeout=5000)
    test = {x["question"]: x for x in read_journal(study.responses_dir / "R9.jsonl")
            if x.get("kind") == "answer" and x["phase"] == "test"}
    assert test[order[0]]["answer"] == "C" and test[order[1]]["answer"] is None
    assert test[order[1]]["rt_ms"] == 6000
    r2.close()


def test_language_model_run_from_the_menu_lands_in_the_results(qtbot, tmp_path):
    """Study ▸ Evaluate a Language Model… with batch results: a job journals the replies and the open results
    view shows the model's row."""
    import json

    from core.study.design import load_study
    from widgets.study.llm_dialog import StudyLLMDialog

    folder = make_small_study(tmp_path / "st", questions=4)
    study = load_study(folder)
    res = tmp_path / "gpt-batch.jsonl"
    res.write_text("".join(json.dumps({"custom_id": q.id, "response": {"body": {"choices": [
        {"message": {"content": f"The answer is {q.truth_letter}."}}]}}}) + "\n" for q in study.test))
    win = open_window(qtbot, tmp_path / "s.ini", path=None)
    try:
        ctl = win.features["study"]
        ctl.pick_folder = lambda title: str(folder)
        _menu_action(win, "Study", "Study Results…").trigger()
        qtbot.waitUntil(lambda: len(ctl.results) == 1)
        view = ctl.results[0]
        assert view.table.rowCount() == 0
        _menu_action(win, "Study", "Evaluate a Language Model…").trigger()
        qtbot.waitUntil(lambda: win.window.findChild(StudyLLMDialog) is not None)
        dlg = win.window.findChild(StudyLLMDialog)
        dlg.backend.setCurrentIndex(dlg.backend.findData("jsonl-import"))
        ok = dlg.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
        assert not ok.isEnabled()
        dlg.model.setText(str(res))
        with qtbot.waitSignal(ctl.llm_finished, timeout=60_000):
            qtbot.mouseClick(ok, QtCore.Qt.MouseButton.LeftButton)
        assert view.table.rowCount() == 1 and view.table.item(0, 0).text() == "gpt-batch-4shot"
        assert view.table.item(0, 5).text() == "100.0"
        view.close()
    finally:
        close_window(win)
