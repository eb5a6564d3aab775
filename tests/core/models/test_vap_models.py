"""VAP models: each trains a few steps and lowers its loss; checkpoints round-trip; box pooling is RoIPool's max."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """These models run many small operations: on a shared CPU, torch's second thread mostly waits (see
    core.models.vap.model.pick_device)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _frames(n_frames=2, n=5, side=64, seed=0):
    import torch

    g = torch.Generator().manual_seed(seed)
    frames = []
    for _ in range(n_frames):
        xy = torch.randint(0, side - 16, (n, 2), generator=g).float()
        boxes = torch.cat([xy, xy + 12], 1)
        unary = (torch.rand(n, 11, generator=g) > 0.5).float()
        binary = (torch.rand(n, n, 6, generator=g) > 0.7).float()
        sees = torch.rand(n, n, generator=g) > 0.3
        sees.fill_diagonal_(True)
        # a rule the reasoners can learn: Stop when the agent's first concept holds, else Normal
        action = torch.where(unary[:, 0] > 0, torch.tensor(3), torch.tensor(1))
        frames.append({"image": torch.rand(3, side, side, generator=g), "boxes": boxes,
                       "h": torch.rand(n, 9, generator=g), "unary": unary, "binary": binary, "sees": sees,
                       "action": action, "car": torch.ones(n, dtype=torch.bool)})
    return frames


def _config(reasoning="gnn", setting="modular"):
    from core.models.vap.config import preset

    return preset("cpu", reasoning=reasoning, setting=setting, image_side=64, fpn_channels=8,
                  unary_names=tuple(f"U{i}" for i in range(11)), binary_names=tuple(f"B{i}" for i in range(6)))


def _fit(model, frames, loss_fn, steps, lr):
    import torch

    torch.manual_seed(0)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    losses = []
    for _ in range(steps):
        loss = loss_fn(model, frames)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("reasoning", ["gnn", "nlm"])
def test_reasoning_on_ground_truth_lowers_its_loss(reasoning):
    import torch

    from core.models.vap.model import VapModel
    from core.tasks.vap.train import action_loss

    torch.manual_seed(0)
    model = VapModel(_config(reasoning), grounding=False)
    frames = _frames()
    losses = _fit(model, frames, lambda m, f: action_loss(m(f, groundings="gt").action_logits, f), 25, 1e-2)
    assert losses[-1] < 0.6 * losses[0]


@pytest.mark.parametrize("setting", ["modular", "e2e"])
def test_grounding_and_end_to_end_lower_their_loss(setting):
    import torch

    from core.models.vap.model import VapModel
    from core.tasks.vap.train import action_loss, concept_loss

    torch.manual_seed(0)
    model = VapModel(_config("gnn", setting))
    frames = _frames()
    if setting == "modular":
        fn = lambda m, f: concept_loss(m(f), f)  # noqa: E731
    else:
        fn = lambda m, f: action_loss(m(f).action_logits, f)  # noqa: E731
    losses = _fit(model, frames, fn, 8, 1e-3)
    assert losses[-1] < losses[0]


def test_checkpoint_round_trip(tmp_path):
    import torch

    from core.models.vap.model import VapModel, load_checkpoint, save_checkpoint

    torch.manual_seed(0)
    model = VapModel(_config("nlm")).eval()
    frames = _frames(1)
    with torch.no_grad():
        before = model(frames, threshold=True).action_logits
    save_checkpoint(model, tmp_path / "run", extra={"note": "x"})
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["config.yaml", "model.safetensors"]
    loaded, doc = load_checkpoint(tmp_path / "run")
    assert doc["note"] == "x" and loaded.cfg == model.cfg
    with torch.no_grad():
        after = loaded(frames, threshold=True).action_logits
    assert torch.equal(before, after)
    (tmp_path / "run" / "config.yaml").write_text(
        (tmp_path / "run" / "config.yaml").read_text().replace("reasoning: nlm", "reasoning: gnn"))
    with pytest.raises(Exception, match="do not fit"):
        load_checkpoint(tmp_path / "run")


def test_box_max_pool_is_the_maximum_over_the_box_and_passes_gradients():
    import torch

    from core.models.vap.grounding import roi_max_pool

    fmap = torch.rand(2, 3, 16, 16, requires_grad=True)
    rois = torch.tensor([[1.0, 8.0, 4.0, 20.0, 12.0]])     # image 1, x 8..20, y 4..12 at scale 0.5
    out = roi_max_pool(fmap, rois, 0.5)
    assert torch.equal(out[0], fmap[1, :, 2:7, 4:11].amax(dim=(1, 2)))
    out.sum().backward()
    assert fmap.grad[1].sum() == 3 and fmap.grad[0].sum() == 0


def test_local_backbone_weights_load_and_pickles_are_refused(tmp_path):
    import torch
    from safetensors.torch import save_file

    from core.base.torchvision_compat import import_torchvision
    from core.models.vap.grounding import load_backbone_weights

    tv = import_torchvision()
    src = tv.models.resnet18(weights=None)
    save_file({k: v.contiguous() for k, v in src.state_dict().items() if not k.startswith("fc.")},
              str(tmp_path / "r18.safetensors"))
    dst = tv.models.resnet18(weights=None)
    load_backbone_weights(dst, tmp_path / "r18.safetensors")
    assert torch.equal(dst.conv1.weight, src.conv1.weight)
    (tmp_path / "r18.pth").write_bytes(b"x")
    with pytest.raises(Exception, match="safetensors"):
        load_backbone_weights(dst, tmp_path / "r18.pth")
