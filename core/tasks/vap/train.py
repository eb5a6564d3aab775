"""Training VAP models (docs/vap.md "Training"): ``train(settings, progress, cancel)``.

Settings follow the reference (docs/reference.md#vap-models): *modular* — the reasoning network learns from
ground-truth groundings (class-weighted cross-entropy, AdamW 5e-3), the grounding network learns the concepts
(BCE, Adam 1e-3), and at validation the predicted concepts are thresholded at 0.5 before reasoning; *e2e* — one
AdamW (1e-3) on the action loss only, through the grounding network's probabilities. Only cars are supervised and
evaluated (the reference's default). Deviations: the two modular parts train one after the other (reasoning
first, it needs no pixels and is cheap), and BatchNorm / Dropout stay in training mode for the whole epoch (the
reference switches to eval after the first batch).

The checkpoint kept is the best on validation (aAcc of the full pipeline; for a reasoning-only run, aAcc on
ground-truth groundings): ``model.safetensors`` + ``config.yaml`` in ``out``; TensorBoard logs in ``out/tb``,
the per-epoch history in ``out/history.json``. torch is imported by this module: import it lazily.
"""
from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch.nn import functional as F

from core.base.errors import ConfigError
from core.io.fileio import atomic_write_text
from core.models.vap.config import VapModelConfig, preset
from core.models.vap.model import VapModel, pick_device, save_checkpoint
from core.tasks.vap.dataset import Cancel
from core.tasks.vap.metrics import ActionMetrics
from core.tasks.vap.torchdata import VapFrames, collate, to_device_list

# tensorboard is imported when training starts.


@dataclass
class TrainSettings:
    data: str
    out: str
    reasoning: str = "gnn"
    setting: str = "modular"
    preset: str = "cpu"
    model: dict[str, Any] = field(default_factory=dict)    # overrides of the preset (image_side, backbone, …)
    epochs: int = 10                 # grounding (modular) or whole-model (e2e) epochs; 0 = reasoning only
    reasoning_epochs: int = 30       # modular: epochs of the reasoning network on ground-truth groundings
    batch_size: int = 2
    reasoning_batch_size: int = 16
    fraction: float = 1.0            # share of the training frames used (the reference's data_rate)
    max_minutes: float | None = None
    max_steps: int | None = None     # stop after this many optimisation steps (a smoke run), keeping the best
    device: str = "auto"
    threads: int | None = None       # CPU threads for torch (default: half the cores)
    seed: int = 0
    cache_images: bool = True


class _Stop(Exception):
    pass


def class_weights(actions: torch.Tensor, n_classes: int = 4) -> torch.Tensor:
    """The reference's per-batch weights: n / (count of class c + 1e-6)."""
    counts = torch.bincount(actions, minlength=n_classes).to(torch.float32)
    return actions.numel() / (counts + 1e-6)


def action_loss(logits: torch.Tensor, frames: list[dict]) -> torch.Tensor | None:
    car = torch.cat([f["car"] for f in frames]).to(logits.device)
    y = torch.cat([f["action"] for f in frames]).to(logits.device)[car]
    if y.numel() == 0:
        return None
    return F.cross_entropy(logits[car], y, weight=class_weights(y).to(logits.device))


def concept_loss(out, frames: list[dict]) -> torch.Tensor:
    dev = out.unary_logits.device
    u = torch.cat([f["unary"] for f in frames]).to(dev)
    loss = F.binary_cross_entropy_with_logits(out.unary_logits, u)
    bl, bt = [], []
    for logit, f in zip(out.binary_logits, frames):
        s = f["sees"].to(dev).to(torch.float32)
        covered = (s.T @ s) > 0
        covered.fill_diagonal_(False)
        bl.append(logit[covered])
        bt.append(f["binary"].to(dev)[covered])
    bl_ = torch.cat(bl)
    if bl_.numel():
        loss = loss + F.binary_cross_entropy_with_logits(bl_, torch.cat(bt))
    return loss


to_device = to_device_list


@torch.no_grad()
def evaluate_actions(model: VapModel, ds: VapFrames, groundings: str, threshold: bool, dev: torch.device,
                     batch_size: int = 8) -> ActionMetrics:
    model.eval()
    m = ActionMetrics()
    for start in range(0, len(ds), batch_size):
        frames = to_device(collate([ds[i] for i in range(start, min(len(ds), start + batch_size))]), dev)
        out = model(frames, groundings=groundings, threshold=threshold)
        pred = out.action_logits.argmax(-1).cpu()
        for f, p in zip(frames, torch.split(pred, out.counts)):
            car = f["car"].cpu()
            m.add_image(p[car].tolist(), f["action"].cpu()[car].tolist())
    return m


def train(s: TrainSettings, progress: Callable[..., None] | None = None, cancel: Any = None,
          log: Callable[[str], None] = print) -> dict:
    """Train per ``s``; returns the summary written to ``out/config.yaml`` (best validation figures)."""
    torch.manual_seed(s.seed)
    np.random.seed(s.seed)
    stop = Cancel(cancel)
    t0 = time.perf_counter()
    deadline = t0 + s.max_minutes * 60 if s.max_minutes else math.inf
    out = Path(s.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = pick_device(s.device, s.threads)
    need_images = s.epochs > 0
    probe = VapFrames(s.data, "train", images=False, fraction=s.fraction)
    info = probe.info
    cfg = preset(s.preset, reasoning=s.reasoning, setting=s.setting,
                 unary_names=tuple(info["unary_predicates"]), binary_names=tuple(info["binary_predicates"]),
                 **s.model)
    if cfg.freeze_backbone and not cfg.weights:
        # a frozen random backbone learns nothing: without ImageNet weights the paper preset trains it too
        cfg = replace(cfg, freeze_backbone=False)
        log("no --weights given: the backbone is trained from scratch instead of frozen")
    side = cfg.image_side
    train_gt = probe
    val_gt = VapFrames(s.data, "val", images=False)
    if len(train_gt) == 0 or len(val_gt) == 0:
        raise ConfigError(f"{s.data}: the train and val stages need frames after step 10 (train {len(train_gt)}, "
                          f"val {len(val_gt)})")
    train_img = VapFrames(s.data, "train", image_side=side, fraction=s.fraction, cache=s.cache_images) \
        if need_images else None
    val_img = VapFrames(s.data, "val", image_side=side, cache=s.cache_images) if need_images else None
    model = VapModel(cfg, grounding=need_images).to(dev)
    from torch.utils.tensorboard import SummaryWriter

    tb = SummaryWriter(str(out / "tb"))
    history: list[dict] = []
    best: dict[str, Any] = {"score": -1.0}
    rng = np.random.default_rng(s.seed)
    step = 0
    r_epochs = s.reasoning_epochs if s.setting == "modular" else 0
    g_epochs = s.epochs
    total = r_epochs * math.ceil(len(train_gt) / s.reasoning_batch_size) + \
        g_epochs * (math.ceil(len(train_img) / s.batch_size) if train_img is not None else 0)
    done = 0

    def tick(text: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, text)
        if stop() or time.perf_counter() > deadline or (s.max_steps is not None and done >= s.max_steps):
            raise _Stop

    def optimise(opt, loss, tag: str, losses: list) -> None:
        """One minibatch: a gradient step on ``loss`` (None: nothing to learn from) and its TensorBoard point."""
        nonlocal step
        if loss is not None:
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            tb.add_scalar(tag, losses[-1], step)
        step += 1

    def record(phase: str, epoch: int, losses: list, key: str, m: ActionMetrics, board: str) -> dict:
        """The epoch's line of the history (validation metrics ``m`` under ``key``); its accuracies also go to
        TensorBoard as ``board`` + aAcc / wAcc."""
        rec = {"phase": phase, "epoch": epoch, "loss": float(np.mean(losses)) if losses else None, key: m.to_dict()}
        history.append(rec)
        tb.add_scalar(f"{board}aAcc", m.a_acc, epoch)
        tb.add_scalar(f"{board}wAcc", m.w_acc, epoch)
        return rec

    def keep(score: float, phase: str, epoch: int, metrics: dict) -> None:
        if score > best["score"]:
            best.update(score=score, phase=phase, epoch=epoch, metrics=metrics,
                        state=copy.deepcopy({k: v.detach().cpu() for k, v in model.state_dict().items()}))

    stopped = False
    try:
        if r_epochs:
            opt: torch.optim.Optimizer = torch.optim.AdamW(model.reasoning.parameters(), lr=5e-3)
            for ep in range(r_epochs):
                model.train()
                order = rng.permutation(len(train_gt))
                losses: list[float] = []
                for b0 in range(0, len(order), s.reasoning_batch_size):
                    frames = to_device(collate([train_gt[int(i)] for i in order[b0:b0 + s.reasoning_batch_size]]),
                                       dev)
                    optimise(opt, action_loss(model(frames, groundings="gt").action_logits, frames),
                             "reasoning/loss", losses)
                    tick(f"reasoning epoch {ep + 1}/{r_epochs}")
                m = evaluate_actions(model, val_gt, "gt", False, dev)
                rec = record("reasoning", ep + 1, losses, "val_gt", m, "val/gt_")
                log(f"reasoning epoch {ep + 1}: loss {rec['loss']:.4f}, val aAcc (GT groundings) {m.a_acc:.4f}, "
                    f"wAcc {m.w_acc:.4f}")
                if not g_epochs:
                    keep(m.a_acc, "reasoning", ep + 1, {"val_gt": m.to_dict()})
            r_state = copy.deepcopy(model.reasoning.state_dict())
        if g_epochs:
            assert train_img is not None and val_img is not None and model.grounding is not None   # need_images
            if s.setting == "modular":
                model.reasoning.load_state_dict(r_state)
                params = [p for p in model.grounding.parameters() if p.requires_grad]
                opt = torch.optim.Adam(params, lr=1e-3)
            else:
                opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
            for ep in range(g_epochs):
                model.train()
                order = rng.permutation(len(train_img))
                losses = []
                for b0 in range(0, len(order), s.batch_size):
                    frames = to_device(collate([train_img[int(i)] for i in order[b0:b0 + s.batch_size]]), dev)
                    o = model(frames)
                    loss = concept_loss(o, frames) if s.setting == "modular" else action_loss(o.action_logits,
                                                                                             frames)
                    optimise(opt, loss, f"{s.setting}/loss", losses)
                    tick(f"{'grounding' if s.setting == 'modular' else 'end-to-end'} epoch {ep + 1}/{g_epochs}")
                m = evaluate_actions(model, val_img, "predicted", s.setting == "modular", dev)
                rec = record(s.setting, ep + 1, losses, "val", m, "val/")
                log(f"{s.setting} epoch {ep + 1}: loss {rec['loss']:.4f}, val aAcc {m.a_acc:.4f}, "
                    f"wAcc {m.w_acc:.4f}")
                keep(m.a_acc, s.setting, ep + 1, {"val": m.to_dict()})
    except KeyboardInterrupt:   # Ctrl-C: stop now, keep the best checkpoint so far
        stopped = True
        log("interrupted; keeping the best checkpoint so far")
    except _Stop:
        stopped = True
        log("stopped (cancelled or out of time); keeping the best checkpoint so far")
        if best.get("state") is None and not stop():
            # out of time before the first validation: validate the weights as they are, so the checkpoint
            # says how good it is (skipped when the user cancelled: they want to stop now)
            if g_epochs and val_img is not None:
                m = evaluate_actions(model, val_img, "predicted", s.setting == "modular", dev)
                keep(m.a_acc, f"{s.setting} (partial epoch)", 0, {"val": m.to_dict()})
            else:
                m = evaluate_actions(model, val_gt, "gt", False, dev)
                keep(m.a_acc, "reasoning (partial epoch)", 0, {"val_gt": m.to_dict()})
            log(f"validation of the partial run: aAcc {m.a_acc:.4f}, wAcc {m.w_acc:.4f}")
    finally:
        tb.close()
    if best.get("state") is None:   # stopped before the first validation: keep the current weights
        best.update(state={k: v.detach().cpu() for k, v in model.state_dict().items()}, phase="none", epoch=0,
                    metrics={}, score=float("nan"))
    model.load_state_dict(best["state"])
    summary = {
        "training": {**asdict(s), "device": str(dev), "seconds": round(time.perf_counter() - t0, 1),
                     "stopped_early": stopped, "train_frames": len(train_gt), "val_frames": len(val_gt)},
        "dataset": {"path": str(s.data), "fingerprint": info.get("fingerprint"), "settings": info.get("settings")},
        "best": {"phase": best["phase"], "epoch": best["epoch"], "val_aAcc": best["score"],
                 **{k: v for k, v in best["metrics"].items()}},
    }
    save_checkpoint(model, out, extra=summary)
    atomic_write_text(out / "history.json", json.dumps(history, indent=1))
    return summary


def model_config_from(doc: dict) -> VapModelConfig:
    return VapModelConfig.from_dict(dict(doc["model"]))
