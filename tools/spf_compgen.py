"""Compositional generalisation check (paper Figure 4): the same trained easy models on 50 episodes drawn with the
training agents (train split settings, same acceptance rules as the shipped sets, base seed 7) vs their test figures
(test agents). Usage: python tools/spf_compgen.py RUN_DIR [RUN_DIR ...]"""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.episodes import save_episode_set
from core.tasks.spf.evaluate import evaluate
from core.tasks.spf.learning.run import load_run, read_config
from core.tasks.spf.make_episodes import make_episode_set

path = Path(os.environ.get("SPF_TRAIN_EPISODES", "demos/spf_easy_train_agents_50.npz"))
t = time.time()
if not path.exists():
    es = make_episode_set("easy", "train", 50, base_seed=7)
    save_episode_set(path, es)
print("episodes made", round(time.time() - t), "s", flush=True)
res = {}
for run in sys.argv[1:]:
    cfg = read_config(run)
    pol = load_run(run, SPFEnv("easy", "train"))
    r = evaluate("easy", pol, "train", episode_file=str(path))
    test = cfg["metrics"].get("test", {})
    res[run] = {"algo": cfg["algo"], "train_agents_TSR": r.tsr, "train_agents_DSR": r.dsr, "test_TSR": test.get("TSR"), "test_DSR": test.get("DSR")}
    print(json.dumps(res[run]), flush=True)
rr = evaluate("easy", "random", "train", episode_file=str(path))
print(json.dumps({"algo": "random", "train_agents_TSR": rr.tsr, "train_agents_DSR": rr.dsr}), flush=True)
