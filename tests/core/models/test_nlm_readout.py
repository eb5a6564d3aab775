"""The NLM read-out (core/models/nlm_readout.py) computes exactly what the full machine computes at the read-out
tuples — values and parameter gradients — for masks, exclude_self on/off, hidden layers, arity-0/3 inputs, several
read-out tuples; it does less work; the observation split matches split_observation."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from core.models.nlm import LogicMachine, split_observation  # noqa: E402
from core.models.nlm_readout import ObservationSplit, Readout  # noqa: E402


def _inputs(dims, b, n, gen):
    shapes = [(b, dims[0]), (b, n, dims[1]), (b, n, n, dims[2]), (b, n, n, n, dims[3])]
    return [(torch.rand(*s, generator=gen) < 0.4).float() if d else None for d, s in zip(dims, shapes)]


@pytest.mark.parametrize("dims, kw, index", [
    ([0, 7, 2, 0], {}, [(0,)]),                                  # NLM-DQN's shape: the ego's unary predicates
    ([0, 7, 2, 0], {"exclude_self": False}, [(0,), (3,)]),
    ([0, 4, 3, 0], {"hidden_dims": (6,), "depth": 3}, [(2,)]),
    ([2, 3, 2, 4], {"output_dims": 5}, [(1,), (0,)]),           # arity-0 and arity-3 inputs too
])
def test_readout_equals_the_full_machine_with_gradients(dims, kw, index):
    gen = torch.Generator().manual_seed(3)
    torch.manual_seed(3)
    m = LogicMachine(dims, output_arities=(1,), **kw)
    n, b = 5, 7
    inputs = _inputs(dims, b, n, gen)
    mask = torch.rand(b, n, generator=gen) > 0.35
    mask[:, 0] = True
    mask[1] = torch.tensor([True, False, False, False, False])   # only the ego is real: empty reductions
    ro = Readout(m, n, 1, index)
    cols = [t[0] for t in index]
    for msk in (mask, None):
        want = m(inputs, msk)[1][:, cols]
        got = ro(m, inputs, msk)
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=0, atol=1e-6)
        w = torch.rand(want.shape, generator=gen)
        g_want = torch.autograd.grad((want * w).sum(), list(m.parameters()), allow_unused=True)
        g_got = torch.autograd.grad((got * w).sum(), list(m.parameters()), allow_unused=True)
        for a, c in zip(g_want, g_got):
            assert (a is None) == (c is None)
            if a is not None:
                torch.testing.assert_close(c, a, rtol=1e-4, atol=1e-6)


def test_readout_computes_fewer_ternary_tuples_than_the_machine():
    m = LogicMachine([0, 7, 2, 0], output_arities=(1,))
    ro = Readout(m, 5)
    # per layer: (arity, tuples computed, orderings, parts); the full machine computes 125 ternary tuples in layers
    # 0 and 1, 25 binary in layers 0-2, 5 unary in every layer
    sizes = [{r: m_ for r, m_, _, _ in steps} for steps in ro._plan]
    assert sizes[-1] == {1: 1}
    assert 0 < sizes[0][3] < 125 and 0 < sizes[1][3] < 125
    assert sizes[2][2] < 25 and sizes[2][1] < 5


def test_readout_refuses_what_it_does_not_support():
    with pytest.raises(ValueError, match="residual"):
        Readout(LogicMachine([0, 3, 2, 0], residual=True), 4)
    with pytest.raises(ValueError, match="entries in 0..3"):
        Readout(LogicMachine([0, 3, 2, 0]), 4, 1, [(4,)])
    with pytest.raises(ValueError, match="no arity-2 output"):
        Readout(LogicMachine([0, 3, 2, 0], output_arities=(1,)), 4, 2, [(0, 1)])


def test_observation_split_matches_split_observation():
    gen = torch.Generator().manual_seed(5)
    blocks = [(0, 1), (5, 1), (10, 2), (35, 1), (40, 2)]        # unary/binary blocks interleaved, as in a layout
    obs = (torch.rand(6, 65, generator=gen) < 0.3).float()
    obs[2, :] = 0.0                                             # an all-zero view: only the ego counts as real
    unary, binary, mask = split_observation(obs, blocks, 5)
    f, mask_t = ObservationSplit(blocks, 5)(obs)
    assert torch.equal(f[1].transpose(0, 1), unary)
    assert torch.equal(f[2].transpose(0, 1).reshape(6, 5, 5, 2), binary)
    assert torch.equal(mask_t.t(), mask)
    m = LogicMachine([0, 3, 2, 0], output_arities=(1,))
    ro = Readout(m, 5)
    torch.testing.assert_close(ro.forward_flat(m, f, mask_t)[0], m([None, unary, binary, None], mask)[1][:, 0],
                               rtol=0, atol=1e-6)


def test_readout_buffers_are_not_in_the_state_dict():
    m = LogicMachine([0, 7, 2, 0], output_arities=(1,))
    holder = torch.nn.Module()
    holder.nlm, holder.readout = m, Readout(m, 5)
    assert set(holder.state_dict()) == {"nlm." + k for k in m.state_dict()}
