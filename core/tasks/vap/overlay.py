"""What the studio's VAP overlay shows for one dataset frame, as plain data (no Qt, no torch in this module).

:class:`FrameOverlay` holds, per agent, the box, the true and (when a model is loaded) predicted action, the true
and predicted unary concepts, and the scene-graph edges (binary concepts between agents) true and predicted. The
panel draws badges, edges filtered by predicate and a hover card from it; :func:`predict_frame` fills it from a
model (imported lazily, since it needs torch).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from core.base.codes import ACTION_NAMES


@dataclass(frozen=True)
class AgentOverlay:
    index: int
    agent_id: str
    box: tuple[int, int, int, int]            # image pixels of the dataset frame
    is_car: bool
    true_action: int
    pred_action: int | None = None
    true_unary: tuple[str, ...] = ()
    pred_unary: tuple[str, ...] | None = None

    @property
    def correct(self) -> bool | None:
        return None if self.pred_action is None else self.pred_action == self.true_action

    def badge(self) -> str:
        t = ACTION_NAMES[self.true_action]
        if self.pred_action is None:
            return f"{self.agent_id}: {t}"
        return f"{self.agent_id}: {ACTION_NAMES[self.pred_action]} (true {t})"


@dataclass(frozen=True)
class Edge:
    src: int          # first argument of the predicate
    dst: int          # second argument
    predicate: str
    true: bool
    pred: bool | None


@dataclass(frozen=True)
class FrameOverlay:
    image_path: str
    world: int
    step: int
    agents: tuple[AgentOverlay, ...]
    binary_names: tuple[str, ...]
    edges: tuple[Edge, ...] = field(default=())

    @property
    def has_prediction(self) -> bool:
        return any(a.pred_action is not None for a in self.agents)

    @property
    def has_predicted_groundings(self) -> bool:
        """False without a model and for a reasoning-only model (it reads the true groundings)."""
        return any(a.pred_unary is not None for a in self.agents)

    def shown_edges(self, predicate: str | None = None, which: str = "predicted") -> list[Edge]:
        """Edges to draw: the predicted ones (the true ones when nothing predicts groundings, or with
        ``which="true"``), of ``predicate`` only when given."""
        use_pred = which == "predicted" and self.has_predicted_groundings
        return [e for e in self.edges if (predicate is None or e.predicate == predicate)
                and (e.pred if use_pred else e.true)]

    def agent_at(self, x: float, y: float) -> int | None:
        """The agent whose box contains image point (x, y) (the smallest box when several do)."""
        hits = [(a.box[2] - a.box[0]) * (a.box[3] - a.box[1]) for a in self.agents]
        best = None
        for a, area in zip(self.agents, hits):
            x1, y1, x2, y2 = a.box
            if x1 <= x < x2 and y1 <= y < y2 and (best is None or area < best[1]):
                best = (a.index, area)
        return None if best is None else best[0]

    def card(self, index: int) -> str:
        """The hover card: action and concepts predicted vs true, and the agent's relations."""
        a = self.agents[index]
        lines = [f"{a.agent_id} — world {self.world}, step {self.step}",
                 f"action: true {ACTION_NAMES[a.true_action]}"
                 + ("" if a.pred_action is None else f", predicted {ACTION_NAMES[a.pred_action]}"
                    + (" ✓" if a.correct else " ✗"))]
        lines.append("concepts true: " + (", ".join(a.true_unary) or "—"))
        if a.pred_unary is not None:
            missed = sorted(set(a.true_unary) - set(a.pred_unary))
            extra = sorted(set(a.pred_unary) - set(a.true_unary))
            lines.append("concepts predicted: " + (", ".join(a.pred_unary) or "—"))
            if missed or extra:
                lines.append(f"  missed: {', '.join(missed) or '—'}; wrong: {', '.join(extra) or '—'}")
        rel_t = [f"{e.predicate}({self.agents[e.src].agent_id}, {self.agents[e.dst].agent_id})"
                 for e in self.edges if e.true and index in (e.src, e.dst)]
        lines.append("relations true: " + (", ".join(rel_t[:8]) + (" …" if len(rel_t) > 8 else "") or "—"))
        if self.has_predicted_groundings:
            rel_p = [f"{e.predicate}({self.agents[e.src].agent_id}, {self.agents[e.dst].agent_id})"
                     for e in self.edges if e.pred and index in (e.src, e.dst)]
            lines.append("relations predicted: " + (", ".join(rel_p[:8]) + (" …" if len(rel_p) > 8 else "")
                                                    or "—"))
        return "\n".join(lines)


def build_overlay(item: dict, unary_names: Sequence[str], binary_names: Sequence[str],
                  pred_action: np.ndarray | None = None, pred_unary: np.ndarray | None = None,
                  pred_binary: np.ndarray | None = None) -> FrameOverlay:
    """From a :class:`~core.tasks.vap.torchdata.VapFrames` item (its ``items[i]`` numpy form) and optional
    predictions (actions [N], unary bool [N, U], binary bool [N, N, B])."""
    n = len(item["agent_id"])
    un = np.asarray(item["unary"]) > 0.5
    bi = np.asarray(item["binary"]) > 0.5
    sees = np.asarray(item["sees"], bool)
    agents = []
    for i in range(n):
        x1, y1, x2, y2 = (int(round(v)) for v in item["boxes"][i])
        agents.append(AgentOverlay(
            i, item["agent_id"][i], (x1, y1, x2, y2), bool(item["car"][i]), int(item["action"][i]),
            None if pred_action is None else int(pred_action[i]),
            tuple(u for u, v in zip(unary_names, un[i]) if v),
            None if pred_unary is None else tuple(u for u, v in zip(unary_names, pred_unary[i]) if v)))
    edges = []
    for a in range(n):
        for b in range(n):
            if a == b or not (sees[a, b] or sees[b, a]):
                continue
            for k, p in enumerate(binary_names):
                t = bool(bi[a, b, k])
                pr = None if pred_binary is None else bool(pred_binary[a, b, k])
                if t or pr:
                    edges.append(Edge(a, b, p, t, pr))
    return FrameOverlay(item["image_path"], int(item["world"]), int(item["step"]), tuple(agents),
                        tuple(binary_names), tuple(edges))


def state_item(config, episode, k: int, renderer, crop: tuple[int, int, int, int] = (0, 0, 128, 128)
               ) -> tuple[np.ndarray, dict]:
    """A recorded state as a VAP frame: (image, item in the form of ``VapFrames.items``).

    State k must have a recorded decision (k < the number of recorded steps): the label is ``decided`` of step
    k and the direction the move to state k + 1 (the dataset's default). The groundings are computed again from
    the state (``config``: the project's SimConfig); CollidingClose's coin flips are drawn afresh, so that
    predicate may differ from what the simulator saw. Agents outside the crop are left out."""
    from core.base.codes import Kind
    from core.sim.compiled import compiled_project
    from core.tasks.vap.labels import direction_heading, ground_truth, h_vectors, next_directions

    if not 0 <= k < episode.num_steps:
        raise ValueError(f"state {k} has no recorded decision yet (recorded steps: {episode.num_steps})")
    snap = episode.snapshot(k)
    dirs = next_directions(snap.positions, episode.snapshot(k + 1).positions)
    heads = np.array([direction_heading(d) for d in dirs], np.int64)
    prev = renderer.render(episode.snapshot(k - 1), crop=crop) if k > 0 else None
    frame = renderer.render(snap, previous=prev, crop=crop, headings=heads)
    keep = [i for i in range(len(snap.agents)) if i in frame.boxes and frame.inside(i)]
    gt = ground_truth(compiled_project(config).grounder.ground(snap, np.random.default_rng(k)))
    idx = np.asarray(keep, np.intp)
    agents = snap.agents
    boxes = np.array([frame.boxes[i] for i in keep], np.float32).reshape(-1, 4)
    pri = np.asarray(agents.priorities)[idx]
    item = {
        "world": -1, "step": int(k), "image_path": "", "height": frame.image.shape[0],
        "width": frame.image.shape[1], "agent_id": [agents.names[i] for i in keep], "boxes": boxes,
        "h": h_vectors(boxes, [dirs[i] for i in keep], pri, frame.image.shape[1]),
        "unary": gt.unary[idx].astype(np.float32), "binary": gt.binary[np.ix_(idx, idx)].astype(np.float32),
        "sees": gt.sees[np.ix_(idx, idx)],
        "action": np.asarray(episode.step_record(k).decided, np.int64)[idx],
        "car": np.asarray(agents.kinds)[idx] == Kind.CAR,
    }
    return frame.image, item


def item_sample(item: dict, image: np.ndarray, image_side: int | None):
    """Model input (as ``VapFrames.__getitem__``) from an item and its full-size image."""
    import torch

    out = {k: item[k] for k in ("world", "step", "image_path", "agent_id")}
    scale = image_side / item["width"] if image_side else 1.0
    out["boxes"] = torch.from_numpy(np.asarray(item["boxes"], np.float32) * scale)
    for k in ("h", "unary", "binary"):
        out[k] = torch.from_numpy(np.asarray(item[k], np.float32))
    out["sees"] = torch.from_numpy(np.asarray(item["sees"], bool))
    out["action"] = torch.from_numpy(np.asarray(item["action"], np.int64))
    out["car"] = torch.from_numpy(np.asarray(item["car"], bool))
    img = image
    if image_side and image.shape[0] != image_side:
        from PIL import Image

        img = np.array(Image.fromarray(image).resize((image_side, image_side), Image.Resampling.BILINEAR))
    out["image"] = torch.from_numpy(np.ascontiguousarray(img)).permute(2, 0, 1).float().div_(255.0)
    return out


def predict_item(model, item: dict, image: np.ndarray, unary_names, binary_names) -> FrameOverlay:
    """Overlay of one item (a recorded state or a dataset frame) with ``model``'s predictions (None: truth)."""
    if model is None:
        return build_overlay(item, unary_names, binary_names)
    side = model.cfg.image_side if model.grounding is not None else None
    return build_overlay(item, unary_names, binary_names, *_predict(model, lambda: item_sample(item, image, side)))


def _predict(model, make_sample):
    """(actions, unary, binary) predicted for one sample; the groundings are None for a reasoning-only model
    (it reads the ground truth)."""
    import torch

    with torch.no_grad():
        sample = make_sample()
        if model.grounding is None:
            out = model([sample], groundings="gt")
            pu = pb = None
        else:
            out = model([sample], threshold=model.cfg.setting == "modular")
            pu = (torch.sigmoid(out.unary_logits) > 0.5).numpy()
            pb = (torch.sigmoid(out.binary_logits[0]) > 0.5).numpy()
        return out.action_logits.argmax(-1).numpy(), pu, pb


def predict_frame(model, frames, index: int) -> FrameOverlay:
    """Run ``model`` (a loaded :class:`core.models.vap.model.VapModel`, or None) on frame ``index`` of
    ``frames`` (a VapFrames) and build its overlay."""
    cfg_u = frames.info["unary_predicates"]
    cfg_b = frames.info["binary_predicates"]
    item = frames.items[index]
    if model is None:
        return build_overlay(item, cfg_u, cfg_b)
    return build_overlay(item, cfg_u, cfg_b, *_predict(model, lambda: frames[index]))
