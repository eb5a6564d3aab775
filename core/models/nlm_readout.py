"""Evaluate a :class:`~core.models.nlm.LogicMachine` only where a read-out needs it (e.g. the ego's unary predicates).

Why: NLM-DQN reads one entity's invented unary predicates (the ego's) after 4 layers. The full machine computes
every arity at every index tuple — 125 ternary tuples for 5 entities — in hundreds of small torch operations per
forward, and on the CPU the per-operation overhead, not the arithmetic, is the cost. Reading back from the output,
the ego's predicate at the last layer needs only the ego's row of binary facts in the layer before, only the tuples
containing the ego before that, and so on (about 40 % of the ternary tuples). :class:`Readout` precomputes, once per machine and entity count, which
index tuples each layer must produce and where every input of every ordering comes from, and then evaluates a layer
arity as: three index gathers (the expanded lower arity, the same arity, the reduced higher arity), one concatenation,
the arity's MLP. Exists/forall reductions are one masked max over ``[v, 1 − v]`` (``forall = 1 − max(1 − v)``).

The result is the same function as ``machine(inputs, mask)[arity][:, index]`` with the same parameters (a test checks
it to float tolerance, with gradients); the read-out holds only index buffers (not saved in a state dict), so
checkpoints are unchanged. Supported: machines without ``residual``/``io_residual`` (what the SPF learners build).
"""
from __future__ import annotations

import itertools
from typing import Sequence, cast

import torch
from torch import nn

from core.models.nlm import LogicMachine, NLMLayer

__all__ = ["Readout", "ObservationSplit"]

Tuple = tuple[int, ...]


def _source(perm: Sequence[int], t: Tuple) -> Tuple:
    """The tuple ``s`` whose features an ordering ``perm`` shows at ``t``: ``s[perm[i]] = t[i]`` (``Tensor.permute``)."""
    s = [0] * len(t)
    for i, p in enumerate(perm):
        s[p] = t[i]
    return tuple(s)


class Readout(nn.Module):
    """``readout(machine, inputs, mask) == machine(inputs, mask)[arity][:, index]`` evaluated only where needed.

    ``inputs``/``mask`` as for :meth:`LogicMachine.forward` (``mask [B, N]`` of real entities or ``None``);
    ``index``: the entity tuples of the read-out arity to return, e.g. ``[(0,)]`` for the ego's unary
    predicates. Returns ``[B, len(index), C]``. Built for one machine shape and one entity count ``n``.
    """

    out_index: torch.Tensor   # buffers, registered in __init__ (so are the plan's index buffers, named there)

    def __init__(self, machine: LogicMachine, n: int, arity: int = 1,
                 index: Sequence[Tuple] = ((0,),)) -> None:
        super().__init__()
        if machine.residual or machine.io_residual:
            raise ValueError("Readout supports machines without residual / io_residual connections")
        self.n, self.arity, self.breadth = int(n), int(arity), machine.breadth
        index = [tuple(int(i) for i in t) for t in index]
        if any(len(t) != arity or not all(0 <= i < n for i in t) for t in index):
            raise ValueError(f"read-out index tuples must have {arity} entries in 0..{n - 1}: {index}")
        layers = [cast(NLMLayer, layer) for layer in machine.layers]   # an nn.ModuleList types its items as Module
        if layers[-1].output_dims[arity] == 0:
            raise ValueError(f"the machine's last layer has no arity-{arity} output")
        self.depth = len(layers)
        # needed[L][r]: tuples layer L must output at arity r (L = -1: the machine's inputs, always complete)
        needed: list[dict[int, set]] = [dict() for _ in layers]
        needed[-1] = {arity: set(index)}
        for L in range(self.depth - 1, -1, -1):
            dims = layers[L].input_dims
            need_in: dict[int, set] = {}
            for r, tuples in needed[L].items():
                for t in tuples:
                    for perm in itertools.permutations(range(r)):
                        s = _source(perm, t)
                        if r > 0 and dims[r - 1]:
                            need_in.setdefault(r - 1, set()).add(s[:-1])
                        if dims[r]:
                            need_in.setdefault(r, set()).add(s)
                        if r < self.breadth and dims[r + 1]:
                            for z in self._range(s, layers[L].exclude_self):
                                need_in.setdefault(r + 1, set()).add(s + (z,))
            if L > 0:
                needed[L - 1] = need_in
        # stored[L][r]: the ordered tuple list of layer L's arity-r output (L = -1 inputs: all tuples, row-major)
        stored_in = {r: list(itertools.product(range(n), repeat=r)) for r in range(self.breadth + 1)}
        stored = [{r: sorted(ts) for r, ts in needed[L].items()} for L in range(self.depth)]
        # per layer: (arity, tuples out, orderings, parts); a part is (kind, input arity, buffer name or None for
        # an identity gather); the buffers are registered below
        self._plan: list[list[tuple[int, int, int, list[tuple[str, int, str | None]]]]] = []
        for L, layer in enumerate(layers):
            src = stored_in if L == 0 else stored[L - 1]
            pos = {r: {t: i for i, t in enumerate(ts)} for r, ts in src.items()}
            dims = layer.input_dims
            steps = []
            for r in sorted(stored[L]):
                out = stored[L][r]
                perms = list(itertools.permutations(range(r))) if r >= 2 else [tuple(range(r))]
                srcs = [_source(p, t) for t in out for p in perms]        # [M * P] in (tuple, ordering) order
                parts: list[tuple[str, int, str | None]] = []
                if r > 0 and dims[r - 1]:
                    parts.append(("gather", r - 1, self._index(f"l{L}r{r}_lo", [pos[r - 1][s[:-1]] for s in srcs],
                                                             len(src[r - 1]))))
                if dims[r]:
                    parts.append(("gather", r, self._index(f"l{L}r{r}_same", [pos[r][s] for s in srcs],
                                                         len(src[r]))))
                if r < self.breadth and dims[r + 1]:
                    # exists/forall at every source tuple: gather [M * P, N] values of the higher arity (a dummy
                    # index where the reduced entity is excluded; its keep weight is 0)
                    gather, keep = [], []
                    for s in srcs:
                        allowed = set(self._range(s, layer.exclude_self))
                        for z in range(n):
                            gather.append(pos[r + 1][s + (z,)] if z in allowed else 0)
                            keep.append(1.0 if z in allowed else 0.0)
                    name = f"l{L}r{r}_red"
                    self._index(name, gather, -1)
                    c = dims[r + 1]
                    self.register_buffer(name + "_keep", torch.tensor(keep).reshape(len(srcs), n, 1, 1),
                                         persistent=False)
                    self.register_buffer(name + "_sign", torch.tensor([1.0] * c + [-1.0] * c), persistent=False)
                    self.register_buffer(name + "_offset", torch.tensor([0.0] * c + [1.0] * c), persistent=False)
                    parts.append(("reduce", r + 1, name))
                steps.append((r, len(out), len(perms), parts))
            self._plan.append(steps)
        self.out_pos = [{t: i for i, t in enumerate(stored[-1][arity])}[t] for t in index]
        self.register_buffer("out_index", torch.tensor(self.out_pos, dtype=torch.long), persistent=False)

    def _range(self, s: Tuple, exclude_self: bool) -> list[int]:
        """Values the variable reduced at ``s`` takes before the entity mask: every entity, or (``exclude_self``,
        reducing arity >= 2) those not in ``s`` — as :func:`core.models.nlm.reduce_exists_forall`."""
        if exclude_self and len(s) >= 1:
            return [z for z in range(self.n) if z not in s]
        return list(range(self.n))

    def _index(self, name: str, values: list[int], size: int) -> str | None:
        """Register an index buffer; ``None`` when it is the identity on a source of ``size`` tuples."""
        if values == list(range(size)):
            return None
        self.register_buffer(name, torch.tensor(values, dtype=torch.long), persistent=False)
        return name

    def forward(self, machine: LogicMachine, inputs: Sequence[torch.Tensor | None],
                mask: torch.Tensor | None = None) -> torch.Tensor:
        b = next(x for x in inputs if x is not None).shape[0]
        # tuple-major: arity r as [N^r, B, C] (gathering whole rows along the first axis is the fast copy)
        f = {r: x.reshape(b, self.n ** r if r else 1, x.shape[-1]).transpose(0, 1)
             for r, x in enumerate(inputs) if x is not None}
        return self.forward_flat(machine, f, None if mask is None else mask.t()).transpose(0, 1)

    def forward_flat(self, machine: LogicMachine, f: dict[int, torch.Tensor],
                     mask_t: torch.Tensor | None = None) -> torch.Tensor:
        """:meth:`forward` on tuple-major inputs ``{arity: [N^arity, B, C]}`` (arity 0: ``[1, B, C]``), rows in
        row-major tuple order, and the entity mask transposed (``[N, B]``); returns ``[len(index), B, C]``."""
        b = next(iter(f.values())).shape[1]
        maskf = None if mask_t is None else mask_t.to(next(iter(f.values())).dtype).reshape(1, self.n, b, 1)
        for L, steps in enumerate(self._plan):
            mlps = cast(NLMLayer, machine.layers[L]).mlps
            new: dict[int, torch.Tensor] = {}
            for r, m, p, parts in steps:
                pieces = []
                for kind, r_in, name in parts:
                    v = f[r_in]
                    if name is None:   # an identity gather
                        pieces.append(v)
                    elif kind == "reduce":
                        pieces.append(self._reduce(name, v, maskf, b, m * p))
                    else:
                        pieces.append(v.index_select(0, getattr(self, name)))
                x = pieces[0] if len(pieces) == 1 else torch.cat(pieces, dim=-1)
                if p > 1:   # rows are (tuple, ordering): put the orderings' channels side by side
                    x = x.reshape(m, p, b, x.shape[-1]).transpose(1, 2).reshape(m, b, p * x.shape[-1])
                new[r] = _mlp(cast(nn.Sequential, mlps[r]), x)   # a planned arity has outputs, so an MLP
            f = new
        return f[self.arity].index_select(0, self.out_index)

    def _reduce(self, name: str, v: torch.Tensor, maskf: torch.Tensor | None, b: int, rows: int) -> torch.Tensor:
        """Exists and forall over the last entity of ``v`` at ``rows`` source tuples, ``[rows, B, 2C]``: one masked
        max over ``[v, 1 - v]``, then ``forall = 1 - max(1 - v)`` (excluded values: exists 0, forall 1)."""
        keep = getattr(self, name + "_keep")
        g = v.index_select(0, getattr(self, name)).reshape(rows, self.n, b, v.shape[-1])
        if maskf is not None:
            keep = keep * maskf
        top = (torch.cat([g, 1.0 - g], dim=-1) * keep).amax(dim=1)
        return torch.addcmul(getattr(self, name + "_offset"), top, getattr(self, name + "_sign"))


def _mlp(seq: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """The arity's MLP applied functionally (module calls cost more than the arithmetic at these sizes)."""
    for mod in seq:
        if isinstance(mod, nn.Linear):
            x = torch.nn.functional.linear(x, mod.weight, mod.bias)
        elif isinstance(mod, nn.Sigmoid):
            x = torch.sigmoid(x)
        elif isinstance(mod, nn.ReLU):
            x = torch.relu(x)
        else:
            x = mod(x)
    return x


class ObservationSplit(nn.Module):
    """SPF observation vectors ``[B, D]`` → the tuple-major inputs of :meth:`Readout.forward_flat` (unary
    ``[N, B, U]``, binary ``[N·N, B, Bn]``) and the entity mask ``[N, B]``, by two row gathers: the same tensors as
    :func:`core.models.nlm.split_observation`, laid out for the read-out. ``blocks``: (offset, arity) per predicate."""

    uidx: torch.Tensor   # buffers, registered in __init__
    bidx: torch.Tensor
    ego: torch.Tensor

    def __init__(self, blocks: Sequence[tuple[int, int]], n: int) -> None:
        super().__init__()
        self.n = int(n)
        un = [off for off, ar in blocks if ar == 1]
        bi = [off for off, ar in blocks if ar == 2]
        if not un or not bi:
            raise ValueError("ObservationSplit needs unary and binary predicates")
        self.u, self.b = len(un), len(bi)
        self.register_buffer("uidx", torch.tensor([off + i for i in range(n) for off in un]), persistent=False)
        self.register_buffer("bidx", torch.tensor([off + p for p in range(n * n) for off in bi]), persistent=False)
        ego = torch.zeros(n, 1, dtype=torch.bool)
        ego[0] = True
        self.register_buffer("ego", ego, persistent=False)

    def forward(self, obs: torch.Tensor) -> tuple[dict[int, torch.Tensor], torch.Tensor]:
        xt = obs.t()
        bsz = obs.shape[0]
        unary = xt.index_select(0, self.uidx).reshape(self.n, self.u, bsz).transpose(1, 2)
        binary = xt.index_select(0, self.bidx).reshape(self.n * self.n, self.b, bsz).transpose(1, 2)
        mask = (unary.amax(dim=-1) > 0) | self.ego
        return {1: unary, 2: binary}, mask
