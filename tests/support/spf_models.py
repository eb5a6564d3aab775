"""Two SPF policies trained by the real trainer on a tiny budget (once per test process): an MLP-BC and an NLM-BC
run on easy, cloned from 6 oracle demonstrations. Cached because several test modules drive them and training is
the slow part; the folders live in a temporary directory removed at exit."""
from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path


@functools.lru_cache(maxsize=1)
def tiny_runs() -> tuple[Path, Path]:
    """(mlp-bc run folder, nlm-bc run folder), both for SPF easy."""
    from core.tasks.spf.demos import collect_oracle, save_demonstrations
    from core.tasks.spf.learning import train

    root = Path(tempfile.mkdtemp(prefix="spf_models_"))
    atexit.register(shutil.rmtree, root, True)
    trajs, meta = collect_oracle("easy", 6, "train", seed=3)
    demos = save_demonstrations(root / "easy6.npz", trajs,
                                meta | {"total_episodes": 6, "total_steps": sum(len(t) for t in trajs)})
    common = dict(demos=demos, val_episodes=1, test=False, tensorboard=False, batch=64, lr=3e-3)
    train("mlp-bc", "easy", root / "mlp", steps=80, seed=0, eval_every=80, **common)
    # without the default hidden layer: 30 steps leave it a weak policy that disagrees with the oracle often,
    # which the marker tests need
    train("nlm-bc", "easy", root / "nlm", steps=30, seed=1, eval_every=30, nlm_hidden=0, **common)
    return root / "mlp", root / "nlm"
