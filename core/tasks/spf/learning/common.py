"""Pieces both learners share: torch set-up, best-checkpoint bookkeeping, the test evaluation at the end of a
run."""
from __future__ import annotations

import copy
import os
import time
from pathlib import Path

from core.tasks.spf.learning.monitor import Monitor, validate
from core.tasks.spf.learning.run import TrainedPolicy, load_run, save_run, write_config

__all__ = ["torch_setup", "BestKeeper", "finish_run"]


def torch_setup(seed: int, threads: int | None = None) -> str:
    """Seed torch and pick the device (CUDA when present). On the CPU one intra-op thread is the default: the
    networks are small and a second thread only contends with the simulator (several times slower on a loaded
    2-core box)."""
    import torch

    torch.manual_seed(seed)
    if torch.cuda.is_available():
        return "cuda"
    torch.set_num_threads(int(threads or os.environ.get("LOGICITY_TORCH_THREADS", "1")))
    return "cpu"


class BestKeeper:
    """Validates the current network every so often and keeps the best one on disk (ranked by validation TSR,
    then DSR, then Score), so a cancelled or crashed run still leaves its best checkpoint."""

    def __init__(self, out: Path, config: dict, mode: str, val_episodes: int, monitor: Monitor) -> None:
        self.out, self.config, self.mode = Path(out), config, mode
        self.val_episodes = val_episodes
        self.monitor = monitor
        self.best: tuple | None = None
        self.best_step = -1
        self.t0 = time.perf_counter()

    def check(self, net, step: int, extra: dict | None = None) -> dict:
        snapshot = copy.deepcopy(net).cpu().eval()
        pol = TrainedPolicy(snapshot, self.config, self.out)
        val = validate(pol, self.mode, self.val_episodes)
        row = {"step": int(step), "val_TSR": val["TSR"], "val_DSR": val["DSR"], "val_Score": val["Score"],
               "seconds": round(time.perf_counter() - self.t0, 1), **(extra or {})}
        self.config["metrics"]["history"].append(row)
        key = (val["TSR"], val["DSR"], val["Score"])
        if self.best is None or key > self.best:
            self.best, self.best_step = key, int(step)
            self.config["metrics"]["val"] = val
            self.config["training"]["best_step"] = int(step)
            save_run(self.out, snapshot, self.config)
        else:
            write_config(self.out, self.config)
        self.monitor.metric(step, val_tsr=val["TSR"], val_score=val["Score"], val_dsr=val["DSR"])
        self.monitor.message(f"step {step}: validation TSR {val['TSR']:.2f} DSR {val['DSR']:.2f} "
                             f"Score {val['Score']:.2f} (best TSR {self.best[0]:.2f} at step {self.best_step})")
        return val


def finish_run(out: Path, config: dict, wall: float, cancelled: bool, test: bool, monitor: Monitor) -> dict:
    """Record the wall time; evaluate the kept (best) checkpoint on the test split unless cancelled or disabled."""
    config["training"]["wall_seconds"] = round(wall, 1)
    config["training"]["cancelled"] = bool(cancelled)
    write_config(out, config)
    if test and not cancelled:
        monitor.message("evaluating the best checkpoint on the test split")
        pol = load_run(out)
        config["metrics"]["test"] = validate(pol, config["mode"], 0, split="test")
        write_config(out, config)
    return config
