"""Screenshot of the studio's SPF Models panel for docs/spf.md (docs/images/spf-models.png): a trained run drives the
selected car of a sim_easy recording from a step as a branch; the map shows its observation at the next state, the
panel the step's Q-values, the studio timeline the branch's forced actions and its *Model ≠ oracle* / *Model broke a
rule* markers. Prints the model markers and the tooltip of the first one. Run:
xvfb-run -a -s "-screen 0 1700x1200x24" .venv/bin/python tools/spf_models_screenshot.py docs/images/spf-models.png
RUN_DIR [CAR [START]] (the docs' picture: a DQN run, Car_1, start 20)."""
import sys
import tempfile
import time

sys.path.insert(0, ".")
from PySide6 import QtCore, QtWidgets  # noqa: E402

app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv)
from app.features.spf.models import SPFModelsPanel  # noqa: E402
from tests.support.driver import studio_window  # noqa: E402

out, run = sys.argv[1], sys.argv[2]
car = sys.argv[3] if len(sys.argv) > 3 else "Car_1"
start = int(sys.argv[4]) if len(sys.argv) > 4 else 20


def wait(cond, limit=300.0):
    t = time.time()
    while not cond():
        app.processEvents()
        time.sleep(0.01)
        if time.time() - t > limit:
            raise SystemExit("timed out")


win = studio_window(tempfile.mkdtemp() + "/s.ini")
win.answers.update(unsaved="discard", model_branch="branch")
win.window.resize(1600, 1153)
win.window.show()
assert win.open_path("configs/modes/sim_easy.yaml")
wait(lambda: win.history is not None and not win.syncing)
win.set_speed(0)
win.play()
wait(lambda: win.num_steps >= start + 5)
win.pause()
wait(lambda: not win.simulation.worker.playing)
win.set_cursor(start)
win.session.select_name(car)
dock = win.docks["spf_models"]
dock.show()
dock.raise_()
panel = dock.widget() if isinstance(dock.widget(), SPFModelsPanel) else dock.findChild(SPFModelsPanel)
assert panel.load(run)
panel.branch_steps.setValue(120)
got = []
panel.branch.finished.connect(got.append)
assert panel.drive_from_shown_step()
wait(lambda: bool(got))
win.set_cursor(start + 1)
r0, r1, c0, c1 = panel.branch.overlay.shown.box
win.map.vb.setRange(QtCore.QRectF(c0 - 8, r0 - 8, c1 - c0 + 16, r1 - r0 + 16), padding=0)
t = time.time()
while time.time() - t < 1.0:
    app.processEvents()
    time.sleep(0.02)
bar = win.timeline.bar
marks = [m for m in bar.markers if m.lane.startswith("spf_model")]
print(f"{len(marks)} model marker(s)")
if marks:
    lane = [n for n, _, _ in bar.lanes].index(marks[0].lane)
    print("tooltip:", bar._tooltip_at(bar.x_of(marks[0].step), 6 + lane * bar.LANE_H + 3))
win.window.grab().save(out)
win.window.close()
