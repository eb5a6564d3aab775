"""Neural Logic Machine: shapes and semantics of expansion, reduction (exists/forall, exclude_self, masks),
permutation, the per-arity layers, and that it learns a relational rule."""
from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")

from core.models.nlm import (  # noqa: E402
    LogicMachine,
    NLMLayer,
    expand,
    permute_arity,
    reduce_exists_forall,
    split_observation,
)


def test_expand_broadcasts_along_a_new_last_axis():
    x = torch.rand(2, 4, 3)                     # arity 1: [B, N, C]
    y = expand(x, 4)
    assert y.shape == (2, 4, 4, 3)
    for i, j in itertools.product(range(4), range(4)):
        assert torch.equal(y[:, i, j], x[:, i])
    z = expand(torch.rand(2, 5), 3)             # arity 0 -> 1
    assert z.shape == (2, 3, 5)


def test_reduce_exists_forall_without_exclusion():
    x = torch.tensor([[[0.0], [1.0], [0.0]], [[1.0], [1.0], [1.0]]])  # arity 1, B=2, N=3, C=1
    y = reduce_exists_forall(x, exclude_self=False)
    assert y.shape == (2, 2)
    assert y.tolist() == [[1.0, 0.0], [1.0, 1.0]]


def test_reduce_excludes_self_on_binary():
    # p(x, y) true only on the diagonal: "exists y != x: p(x, y)" is false, "forall y != x: p" too
    eye = torch.eye(3).reshape(1, 3, 3, 1)
    y = reduce_exists_forall(eye, exclude_self=True)
    assert y.shape == (1, 3, 2)
    assert torch.equal(y[0, :, 0], torch.zeros(3)) and torch.equal(y[0, :, 1], torch.zeros(3))
    y_incl = reduce_exists_forall(eye, exclude_self=False)
    assert torch.equal(y_incl[0, :, 0], torch.ones(3))
    # off-diagonal all true: forall y != x holds only with the exclusion
    off = (1 - torch.eye(3)).reshape(1, 3, 3, 1)
    assert torch.equal(reduce_exists_forall(off, exclude_self=True)[0, :, 1], torch.ones(3))
    assert torch.equal(reduce_exists_forall(off, exclude_self=False)[0, :, 1], torch.zeros(3))


def test_reduce_ternary_excludes_both_other_indices():
    n = 3
    x = torch.zeros(1, n, n, n, 1)
    for i, j in itertools.product(range(n), range(n)):
        x[0, i, j, i, 0] = 1.0                  # true only where z == x
        x[0, i, j, j, 0] = 1.0                  # ... or z == y
    y = reduce_exists_forall(x, exclude_self=True)
    assert y.shape == (1, n, n, 2)
    for i, j in itertools.product(range(n), range(n)):
        # z ranges over entities other than i and j: all false there
        assert y[0, i, j, 0] == 0.0
        # when i == j one candidate z remains free in 3 entities (two others): forall false
        assert y[0, i, j, 1] == 0.0


def test_reduce_skips_masked_entities():
    x = torch.tensor([[[1.0], [1.0], [0.0]]])    # third entity is padding
    mask = torch.tensor([[True, True, False]])
    y = reduce_exists_forall(x, mask=mask)
    assert y.tolist() == [[1.0, 1.0]]            # forall over the real ones
    none = reduce_exists_forall(x, mask=torch.zeros(1, 3, dtype=torch.bool))
    assert none.tolist() == [[0.0, 1.0]]         # empty range: exists false, forall true
    # binary with mask: padding entity 2 never witnesses exists
    b = torch.zeros(1, 3, 3, 1)
    b[0, 0, 2, 0] = 1.0
    yb = reduce_exists_forall(b, mask=mask)
    assert yb[0, 0, 0] == 0.0


def test_permute_arity_concatenates_every_ordering():
    x = torch.rand(2, 3, 3, 4)
    y = permute_arity(x)
    assert y.shape == (2, 3, 3, 8)
    assert torch.equal(y[..., :4], x) and torch.equal(y[..., 4:], x.transpose(1, 2))
    t = torch.rand(1, 3, 3, 3, 2)
    yt = permute_arity(t)
    assert yt.shape == (1, 3, 3, 3, 12)
    assert torch.equal(yt[0, 0, 1, 2, 2:4], t[0, 0, 2, 1])  # second ordering (0, 2, 1)
    u = torch.rand(2, 3, 5)
    assert permute_arity(u) is u


def test_layer_shapes_per_arity():
    layer = NLMLayer(3, [0, 4, 2, 0], 8)
    assert layer.output_dims == [8, 8, 8, 8]
    u, b = torch.rand(2, 5, 4), torch.rand(2, 5, 5, 2)
    out = layer([None, u, b, None], 5)
    assert out[0].shape == (2, 8) and out[1].shape == (2, 5, 8)
    assert out[2].shape == (2, 5, 5, 8) and out[3].shape == (2, 5, 5, 5, 8)
    # input widths: arity 1 = 4 + 2*2, arity 2 = (4 + 2) * 2!, arity 3 = 2 * 3!
    assert layer.mlps[1][0].in_features == 8
    assert layer.mlps[2][0].in_features == 12
    assert layer.mlps[3][0].in_features == 12
    assert layer.mlps[0][0].in_features == 8
    assert all(((o >= 0) & (o <= 1)).all() for o in out)


def test_machine_defaults_and_output_dims():
    m = LogicMachine([0, 7, 2, 0])
    assert m.breadth == 3 and m.depth == 4 and len(m.layers) == 4
    assert m.out_dims == [8, 8, 8, 8]
    out = m([None, torch.rand(3, 5, 7), torch.rand(3, 5, 5, 2), None])
    assert out[1].shape == (3, 5, 8)
    r = LogicMachine([0, 7, 2, 0], residual=True, io_residual=True, depth=2)
    assert r.out_dims == [16, 7 + 16 + 7, 2 + 16 + 2, 16]
    with pytest.raises(ValueError):
        LogicMachine([0, 7, 2])


def test_machine_is_permutation_equivariant_over_entities():
    torch.manual_seed(0)
    m = LogicMachine([0, 3, 2, 0], depth=2)
    u, b = torch.rand(1, 4, 3), torch.rand(1, 4, 4, 2)
    perm = torch.tensor([2, 0, 3, 1])
    out = m([None, u, b, None])[1]
    out_p = m([None, u[:, perm], b[:, perm][:, :, perm], None])[1]
    assert torch.allclose(out[:, perm], out_p, atol=1e-6)


def test_split_observation_matches_the_layout():
    n = 5
    blocks = [(0, 1), (5, 1), (10, 2), (35, 2)]
    obs = torch.zeros(1, 60)
    obs[0, 1] = 1.0                              # P0(e1)
    obs[0, 5 + 3] = 1.0                          # P1(e3)
    obs[0, 10 + 1 * n + 2] = 1.0                 # B0(e1, e2)
    obs[0, 35 + 4 * n + 0] = 1.0                 # B1(e4, e0)
    u, b, mask = split_observation(obs, blocks, n)
    assert u.shape == (1, 5, 2) and b.shape == (1, 5, 5, 2)
    assert u[0, 1, 0] == 1 and u[0, 3, 1] == 1 and u.sum() == 2
    assert b[0, 1, 2, 0] == 1 and b[0, 4, 0, 1] == 1 and b.sum() == 2
    assert mask.tolist() == [[True, True, False, True, False]]  # ego always real


def test_machine_learns_an_existential_rule():
    """Target for entity x: exists y != x with E(x, y) and Red(y). Trained briefly, the NLM fits it exactly."""
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread avoids contention on a shared box
    n, batch = 5, 64

    def data(k):
        red = (torch.rand(k, n, 1) < 0.4).float()
        e = (torch.rand(k, n, n, 1) < 0.3).float() * (1 - torch.eye(n)).reshape(1, n, n, 1)
        target = ((e[..., 0] * red[:, None, :, 0]).amax(dim=-1) > 0).float()
        return red, e, target

    m = LogicMachine([0, 1, 1], breadth=2, depth=2)
    head = torch.nn.Linear(8, 1)
    opt = torch.optim.Adam(list(m.parameters()) + list(head.parameters()), lr=0.03)
    for _ in range(200):
        red, e, target = data(batch)
        logits = head(m([None, red, e])[1]).squeeze(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    red, e, target = data(1000)
    with torch.no_grad():
        acc = ((head(m([None, red, e])[1]).squeeze(-1) > 0).float() == target).float().mean()
    torch.set_num_threads(threads)
    assert acc > 0.97


def test_layer_mlp_without_the_wide_permutation_tensor_is_exact():
    torch.manual_seed(1)
    layer = NLMLayer(3, [2, 3, 2, 4], 5, hidden_dims=(6,))
    x3 = torch.rand(2, 4, 4, 4, 2 + 4)
    x2 = torch.rand(2, 4, 4, 3 + 2 + 8)
    assert torch.allclose(layer._apply_mlp(3, x3), layer.mlps[3](permute_arity(x3)), atol=1e-5)
    assert torch.allclose(layer._apply_mlp(2, x2), layer.mlps[2](permute_arity(x2)), atol=1e-5)


def test_output_arities_prunes_without_changing_results():
    torch.manual_seed(2)
    full = LogicMachine([0, 4, 2, 0])
    pruned = LogicMachine([0, 4, 2, 0], output_arities=(1,))
    assert pruned.layers[-1].output_dims == [0, 8, 0, 0]
    assert pruned.layers[-2].output_dims == [8, 8, 8, 0]
    missing = pruned.load_state_dict(full.state_dict(), strict=False)
    assert not missing.missing_keys
    u, b = torch.rand(3, 5, 4), torch.rand(3, 5, 5, 2)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False], [True, False, True, True, False]])
    assert torch.allclose(full([None, u, b, None], mask)[1], pruned([None, u, b, None], mask)[1], atol=1e-6)
    assert sum(p.numel() for p in pruned.parameters()) < sum(p.numel() for p in full.parameters())
