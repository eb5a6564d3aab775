"""Evaluating a VAP checkpoint on a dataset stage: Table 3's action figures and Table D's concept recall.

``groundings``: ``predicted`` (the grounding network's concepts — thresholded at 0.5 for a modular model, as
probabilities for an end-to-end one) or ``gt`` (ground-truth groundings: what the reasoning network alone gets).
Test images are evaluated one by one (batch size 1, as the reference). torch is imported: import lazily.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from core.base.errors import ConfigError
from core.models.vap.model import load_checkpoint, pick_device
from core.tasks.vap.dataset import Cancel
from core.tasks.vap.metrics import ActionMetrics, ConceptRecall
from core.tasks.vap.overlay import _predict, item_sample, state_item
from core.tasks.vap.torchdata import VapFrames, to_device_list


@dataclass
class EvalResult:
    actions: ActionMetrics
    unary: ConceptRecall | None
    binary: ConceptRecall | None
    groundings: str
    stage: str
    frames: int
    predictions: list[dict]

    def to_dict(self) -> dict[str, Any]:
        d = {"stage": self.stage, "groundings": self.groundings, "frames": self.frames,
             "actions": self.actions.to_dict()}
        if self.unary is not None and self.binary is not None:
            d["concept_recall"] = {**self.unary.recalls, **self.binary.recalls}
        return d


@torch.no_grad()
def evaluate(checkpoint: str | Path, data: str | Path, stage: str = "test", groundings: str = "auto",
             device: str = "auto", progress: Callable[..., None] | None = None, cancel: Any = None,
             limit: int | None = None) -> EvalResult:
    """Evaluate ``checkpoint`` on ``data``'s ``stage``. ``auto`` = predicted when the checkpoint has a grounding
    network, else gt."""
    dev = pick_device(device)
    model, doc = load_checkpoint(checkpoint, dev)
    cfg = model.cfg
    if groundings == "auto":
        groundings = "predicted" if model.grounding is not None else "gt"
    if groundings == "predicted" and model.grounding is None:
        raise ConfigError(f"{checkpoint} holds a reasoning network only; evaluate it with ground-truth groundings")
    use_images = groundings == "predicted"
    ds = VapFrames(data, stage, image_side=cfg.image_side if use_images else None, images=use_images)
    n = len(ds) if limit is None else min(limit, len(ds))
    stop = Cancel(cancel)
    actions = ActionMetrics()
    unary = ConceptRecall(cfg.unary_names) if use_images else None
    binary = ConceptRecall(cfg.binary_names) if use_images else None
    threshold = cfg.setting == "modular"
    preds: list[dict] = []
    for i in range(n):
        frame = to_device_list([ds[i]], dev)
        out = model(frame, groundings=groundings, threshold=threshold)
        f = frame[0]
        car = f["car"].cpu()
        p = out.action_logits.argmax(-1).cpu()
        actions.add_image(p[car].tolist(), f["action"].cpu()[car].tolist())
        rec = {"world": f["world"], "step": f["step"], "pred": p.tolist()}
        if unary is not None and binary is not None:   # use_images
            pu = (torch.sigmoid(out.unary_logits) > 0.5).cpu()
            pb = (torch.sigmoid(out.binary_logits[0]) > 0.5).cpu()
            unary.add(pu.numpy(), f["unary"].cpu().numpy() > 0.5)
            s = f["sees"].cpu().float()
            cov = (s.T @ s) > 0
            cov.fill_diagonal_(False)
            binary.add(pb[cov].numpy(), f["binary"].cpu()[cov].numpy() > 0.5)
        preds.append(rec)
        if progress is not None:
            progress(i + 1, n, f"{stage} frame {i + 1}/{n}")
        if stop():
            break
    return EvalResult(actions, unary, binary, groundings, ds.stage, len(preds), preds)


@torch.no_grad()
def evaluate_episode(model, config, episode, renderer, steps: range | None = None,
                     progress: Callable[..., None] | None = None, cancel: Any = None) -> EvalResult:
    """Evaluate a loaded ``model`` on the recorded states of a studio episode (``config``: its SimConfig): each
    state with a recorded decision is rendered as a VAP frame (:func:`core.tasks.vap.overlay.state_item`) and the
    truth is the decision the simulator took. Cars only, one image at a time, as :func:`evaluate`."""
    steps = range(episode.num_steps) if steps is None else steps
    stop = Cancel(cancel)
    cfg = model.cfg
    use_images = model.grounding is not None
    actions = ActionMetrics()
    unary = ConceptRecall(cfg.unary_names) if use_images else None
    binary = ConceptRecall(cfg.binary_names) if use_images else None
    side = cfg.image_side if use_images else None
    preds: list[dict] = []
    for j, k in enumerate(steps):
        image, item = state_item(config, episode, k, renderer)
        if len(item["agent_id"]):
            act, pu, pb = _predict(model, functools.partial(item_sample, item, image, side))
            car = item["car"]
            actions.add_image(act[car].tolist(), item["action"][car].tolist())
            if unary is not None and binary is not None:   # use_images
                unary.add(pu, item["unary"] > 0.5)
                s = item["sees"].astype(float)
                cov = (s.T @ s) > 0
                np.fill_diagonal(cov, False)
                binary.add(pb[cov], item["binary"][cov] > 0.5)
            preds.append({"world": -1, "step": int(k), "pred": act.tolist()})
        if progress is not None:
            progress(j + 1, len(steps), f"step {k}")
        if stop():
            break
    return EvalResult(actions, unary, binary, "predicted" if use_images else "gt", "episode", len(preds), preds)
