"""VAP models: grounding network (ResNet + FPN + RoI features, node and edge heads) and reasoning networks
(GNN, NLM). ``config`` is plain data; ``grounding``, ``reasoning`` and ``model`` import torch (import them lazily)."""
