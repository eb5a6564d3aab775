"""The participant runner: a full-screen window that walks one participant through a study.

Screens: participant id + consent → instructions → training documents (with answers) → practice (feedback after
each answer) → test questions (no answer shown) → thank you. Keys: 1-4 or A-D answer, Space/Enter go on, P or
Esc pause and resume. The window only shows what :class:`core.study.runner.RunnerSession` says; every answer is
committed to the participant's journal (fsync) by the session before the next question is drawn.
"""
from __future__ import annotations

from typing import Callable

from PySide6 import QtCore, QtGui, QtWidgets

from core.study.design import Study, question_text
from core.study.journal import JournalError
from core.study.runner import KEY_LETTERS, RunnerSession
from core.study.source import ACTION_LETTERS, ACTION_WORDS

_BIG = "font-size: 17pt;"
_TEXT = "font-size: 14pt;"


class StudyRunnerWindow(QtWidgets.QWidget):
    """One participant's session. ``finished(participant)`` when the last question is answered."""

    finished = QtCore.Signal(str)

    def __init__(self, study: Study, parent: QtWidgets.QWidget | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Study — {study.spec.name}")
        self.study = study
        self.clock = clock
        self.session: RunnerSession | None = None
        self._finished_sent = False
        self._welcome_back = False
        self.stack = QtWidgets.QStackedWidget()
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(60, 40, 60, 40)
        lay.addWidget(self.stack)
        self._build_login()
        self._build_instructions()
        self._build_item()
        self._build_paused()
        self._build_done()
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(200)
        self.timer.timeout.connect(self._tick)
        self.stack.setCurrentWidget(self.login_page)

    # ---- pages ------------------------------------------------------------------------------------------------
    def _label(self, text: str = "", style: str = _TEXT) -> QtWidgets.QLabel:
        lab = QtWidgets.QLabel(text)
        lab.setWordWrap(True)
        lab.setStyleSheet(style)
        lab.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        return lab

    def _button(self, text: str, slot, name: str) -> QtWidgets.QPushButton:
        b = QtWidgets.QPushButton(text)
        b.setObjectName(name)
        b.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)   # keys go to the window, never "click" a focused button
        b.setStyleSheet(_TEXT + "padding: 8px 18px;")
        b.clicked.connect(slot)
        return b

    def _build_login(self) -> None:
        self.login_page = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(self.login_page)
        v.addWidget(self._label(self.study.spec.name, _BIG + "font-weight: bold;"))
        v.addWidget(self._label(self.study.spec.consent))
        form = QtWidgets.QFormLayout()
        self.pid = QtWidgets.QLineEdit()
        self.pid.setObjectName("participant_id")
        self.pid.setPlaceholderText("e.g. P01")
        # queued: QLineEdit passes the same Return on to the window, which must not also start the instructions
        self.pid.returnPressed.connect(lambda: QtCore.QTimer.singleShot(0, self.agree))
        form.addRow(self._label("Participant id:"), self.pid)
        v.addLayout(form)
        self.login_error = self._label("", _TEXT + "color: #b00020;")
        v.addWidget(self.login_error)
        row = QtWidgets.QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self._button("I agree", self.agree, "agree"))
        v.addLayout(row)
        v.addStretch(1)
        self.stack.addWidget(self.login_page)

    def _build_instructions(self) -> None:
        self.instructions_page = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(self.instructions_page)
        v.addWidget(self._label("Instructions", _BIG + "font-weight: bold;"))
        v.addWidget(self._label(self.study.spec.instructions))
        self.resume_note = self._label("", _TEXT + "color: #555;")
        v.addWidget(self.resume_note)
        row = QtWidgets.QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self._button("Start (Space)", self.go_on, "start"))
        v.addLayout(row)
        v.addStretch(1)
        self.stack.addWidget(self.instructions_page)

    def _build_item(self) -> None:
        self.item_page = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(self.item_page)
        top = QtWidgets.QHBoxLayout()
        self.stage_label = self._label("", _TEXT + "font-weight: bold;")
        self.stage_label.setObjectName("stage_label")
        top.addWidget(self.stage_label, 1)
        self.clock_label = self._label("", _TEXT + "color: #555;")
        top.addWidget(self.clock_label)
        top.addWidget(self._button("Pause (P)", self.toggle_pause, "pause"))
        v.addLayout(top)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setObjectName("progress")
        self.progress.setFormat("%v of %m answered")
        v.addWidget(self.progress)
        body = QtWidgets.QHBoxLayout()
        self.scene = self._label("")
        self.scene.setObjectName("scene_text")
        self.scene.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        scroll = QtWidgets.QScrollArea()   # a crowded view can describe many entities
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        scroll.setWidget(self.scene)
        scroll.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        body.addWidget(scroll, 3)
        self.image = QtWidgets.QLabel()
        self.image.setObjectName("scene_image")
        body.addWidget(self.image, 2)
        v.addLayout(body, 1)
        self.question = self._label("", _BIG)
        v.addWidget(self.question)
        opts = QtWidgets.QHBoxLayout()
        self.options = {}
        for k, (letter, word) in enumerate(zip(ACTION_LETTERS, ACTION_WORDS), 1):
            b = self._button(f"{k} / {letter}   {word}", lambda _=False, l=letter: self.choose(l), f"option_{letter}")
            self.options[letter] = b
            opts.addWidget(b)
        v.addLayout(opts)
        self.answer_label = self._label("", _BIG)
        self.answer_label.setObjectName("answer_label")
        v.addWidget(self.answer_label)
        row = QtWidgets.QHBoxLayout()
        self.back_button = self._button("Back", self.go_back, "back")
        row.addWidget(self.back_button)
        row.addStretch(1)
        self.next_button = self._button("Next (Space)", self.go_on, "next")
        row.addWidget(self.next_button)
        v.addLayout(row)
        self.stack.addWidget(self.item_page)

    def _build_paused(self) -> None:
        self.paused_page = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(self.paused_page)
        v.addStretch(1)
        lab = self._label("Paused. Your answers so far are saved.\nPress P or Esc, or the button, to continue.", _BIG)
        lab.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        v.addWidget(lab)
        row = QtWidgets.QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self._button("Resume", self.toggle_pause, "resume"))
        row.addStretch(1)
        v.addLayout(row)
        v.addStretch(1)
        self.stack.addWidget(self.paused_page)

    def _build_done(self) -> None:
        self.done_page = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(self.done_page)
        v.addStretch(1)
        lab = self._label("Thank you! All your answers are saved. You may close this window (Esc).", _BIG)
        lab.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        v.addWidget(lab)
        v.addStretch(1)
        self.stack.addWidget(self.done_page)

    # ---- actions ----------------------------------------------------------------------------------------------
    def agree(self) -> None:
        if self.session is not None:
            return
        try:
            kwargs = {"clock": self.clock} if self.clock is not None else {}
            self.session = RunnerSession(self.study, self.pid.text(), **kwargs)
        except JournalError as exc:
            self.login_error.setText(exc.message)
            return
        self.session.agree()
        if self.session.resumed and self.session.stage not in ("instructions", "done"):
            # a resumed session shows the instructions again, with where it continues, before the next question
            done, total = self.session.progress()
            self.resume_note.setText(f"Welcome back, {self.session.participant}: you answered {done} of {total} "
                                     "questions; press Space to continue where you stopped.")
            self._welcome_back = True
        self.timer.start()
        self.refresh()

    def go_on(self) -> None:
        s = self.session
        if s is None or s.paused:
            return
        st = s.stage
        if self._welcome_back:
            self._welcome_back = False
            s.current()   # the response clock of the question starts now, not while the note was read
        elif st == "instructions":
            s.start()
        elif st == "training":
            s.next_document()
        elif st == "feedback":
            s.dismiss_feedback()
        else:
            return
        self.refresh()

    def go_back(self) -> None:
        if self.session is not None and not self.session.paused:
            self.session.previous_document()
            self.refresh()

    def choose(self, letter: str) -> None:
        s = self.session
        if s is None or s.paused or self._welcome_back or s.stage not in ("practice", "test"):
            return
        s.answer(letter)
        self.refresh()

    def toggle_pause(self) -> None:
        s = self.session
        if s is None or s.stage == "done":
            return
        s.resume() if s.paused else s.pause()
        self.refresh()

    def _tick(self) -> None:
        s = self.session
        if s is None or self._welcome_back:
            return
        if s.tick():
            self.refresh()
        rem = s.remaining_s()
        self.clock_label.setText("" if rem is None else f"{rem:4.0f} s left")

    def keyPressEvent(self, ev: QtGui.QKeyEvent) -> None:  # noqa: N802 (Qt API)
        s = self.session
        key, text = ev.key(), ev.text().upper()
        if s is None:
            super().keyPressEvent(ev)
            return
        if key in (QtCore.Qt.Key.Key_P, QtCore.Qt.Key.Key_Escape):
            if s.stage == "done" and key == QtCore.Qt.Key.Key_Escape:
                self.close()
            else:
                self.toggle_pause()
        elif text in KEY_LETTERS and s.stage in ("practice", "test"):
            self.choose(KEY_LETTERS[text])
        elif key in (QtCore.Qt.Key.Key_Space, QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter):
            self.go_on()
        elif key == QtCore.Qt.Key.Key_Left:
            self.go_back()
        else:
            super().keyPressEvent(ev)

    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:  # noqa: N802
        self.timer.stop()
        if self.session is not None:
            self.session.close()
        super().closeEvent(ev)

    # ---- drawing ----------------------------------------------------------------------------------------------
    def refresh(self) -> None:
        s = self.session
        if s is None:
            self.stack.setCurrentWidget(self.login_page)
            return
        if s.paused:
            self.stack.setCurrentWidget(self.paused_page)
            return
        st = s.stage
        if st == "instructions" or self._welcome_back:
            self.stack.setCurrentWidget(self.instructions_page)
            return
        if st == "done":
            self.timer.stop()
            self.stack.setCurrentWidget(self.done_page)
            if not self._finished_sent:
                self._finished_sent = True
                self.finished.emit(s.participant)
            return
        q = s.current()
        assert q is not None
        done, total = s.progress()
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.progress.setVisible(st == "test")
        modality = self.study.spec.modality
        self.scene.setText(q.description if modality != "image" else "")
        self.scene.setVisible(modality != "image")
        self._show_image(q.image if modality != "text" else None)
        self.question.setText(question_text(q))
        answering = st in ("practice", "test")
        for b in self.options.values():
            b.setVisible(answering)
        self.back_button.setVisible(st == "training" and s.training_index > 0)
        self.next_button.setVisible(st in ("training", "feedback"))
        if st == "training":
            self.stage_label.setText(f"Solved example {s.training_index + 1} of {len(s.training)}")
            self.answer_label.setText(f"Answer: {q.truth_letter} ({q.truth_word})")
        elif st == "feedback":
            fb = s.feedback
            assert fb is not None
            given = f"{fb.answer} ({ACTION_WORDS[ACTION_LETTERS.index(fb.answer)]})" if fb.answer else "no answer"
            verdict = "Correct." if fb.correct else "Not quite."
            self.stage_label.setText("Practice — feedback")
            self.answer_label.setText(f"{verdict} You chose {given}; the answer is {q.truth_letter} "
                                      f"({q.truth_word}).")
        elif st == "practice":
            n = len(s.journal.answers("practice")) + 1
            self.stage_label.setText(f"Practice question {n} of {len(s.practice)}")
            self.answer_label.setText("")
        else:
            self.stage_label.setText(f"Question {done + 1} of {total}")
            self.answer_label.setText("")
        self.stack.setCurrentWidget(self.item_page)

    def _show_image(self, rel: str | None) -> None:
        if not rel:
            self.image.clear()
            self.image.setVisible(False)
            return
        pix = QtGui.QPixmap(str(self.study.folder / rel))
        self.image.setPixmap(pix.scaled(560, 560, QtCore.Qt.AspectRatioMode.KeepAspectRatio,
                                        QtCore.Qt.TransformationMode.SmoothTransformation))
        self.image.setVisible(True)
