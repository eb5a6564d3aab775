"""Screenshot of the city editor for the README (docs/images/city-editor.png): the default city in editor mode after
a House stroke across a traffic street (the Problems panel shows the error, the map its cells), the lanes overlay
and the traffic tool's cursor preview. Run: xvfb-run -a -s "-screen 0 1440x1200x24" .venv/bin/python
tools/city_editor_screenshot.py docs/images/city-editor.png"""
import sys
import time
from pathlib import Path

sys.path.insert(0, ".")
from PySide6 import QtCore, QtWidgets

from core.map.edit import plan_rect, plan_stroke
from core.studio import city_edit
from core.studio.city_edit import CityEdit
from tests.support.driver import studio_window

app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv)
win = studio_window(Path("/tmp/shot.ini"))
win.answers["unsaved"] = "discard"
win.window.resize(1440, 1125)
win.window.show()
assert win.open_path("configs/modes/default.yaml")
t = time.time()
while (win.history is None or win.syncing) and time.time() - t < 60:
    app.processEvents(); time.sleep(0.02)
ed = win.features["city_editor"]
ed.set_mode(True)
s = win.session
d = city_edit.draft_of(s)
s.execute(CityEdit(plan_stroke(d, [(130, 150), (130, 180)], "House", 5), "Paint House"))
s.execute(CityEdit(plan_rect(d, (150, 150), (160, 170), "Store"), "Fill"))
s.execute(CityEdit(plan_stroke(d, [(170, 60), (170, 90)], "walking", 3), "Paint walking"))
ed.select_tool("traffic")
win.map.vb.setRange(QtCore.QRectF(40, 30, 170, 170), padding=0)
win.map.tools.set_preview([(120, 60, 130, 70)], (92, 98, 108, 110))
pc = win.features["problems"]
pc.refresh_now()
win.window.panels.widget("problems").activate_row(0)
win.map.vb.setRange(QtCore.QRectF(50, 40, 150, 150), padding=0)
t = time.time()
while time.time() - t < 1.5:
    app.processEvents(); time.sleep(0.02)
win.window.grab().save(sys.argv[1])
win.answers["unsaved"] = "discard"
win.window.close()
