"""DriveWithModel (a model's forced actions for one agent from a step on): one undoable command that replaces that
agent's later forced actions, keeps the others', and is refused once a step was simulated with it."""
from __future__ import annotations

from core.studio.commands import ForceAction
from core.studio.model_commands import DriveWithModel
from tests.support.studio import recorded_session


def test_drive_with_model_adds_replaces_undoes_and_is_refused_once_simulated(config, frames):
    s = recorded_session(config, frames)
    s.execute(ForceAction(1, 3, 4, "Car_3"))             # another agent's forced action stays
    s.execute(ForceAction(0, 0, 4, "Car_0"))             # this agent's, from the branch step on, is replaced
    before = s.state()
    entries = [{"step": 4, "agent": 0, "action": 1}, {"step": 6, "agent": 0, "action": 3},
               {"step": 7, "agent": 0, "action": None}]
    s.execute(DriveWithModel(entries, 0, 4, "model drives Car_0 from step 4"))
    assert list(s.interventions) == [{"step": 4, "agent": 1, "action": 3}] + entries
    assert s.history.meta["interventions"] == list(s.interventions)   # saved with the recording
    assert s.stack.undo_text() == "model drives Car_0 from step 4"
    s.stack.undo()
    assert s.state() == before
    s.stack.redo()
    assert list(s.interventions)[1:] == entries
    s.record(frames[5:6])                                 # step 4 simulated with the model's action
    refused = []
    s.stack.events.refused.connect(lambda e: refused.append(e.value))
    assert s.stack.undo() is False
    assert "simulated with the model's actions" in refused[0]
    assert list(s.interventions)[1:] == entries           # the recording still says what happened
