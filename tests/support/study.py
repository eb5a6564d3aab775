"""A small real study (simulated vap_hard episodes) for study tests in several folders."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make_small_study(folder: Path, questions: int = 12, modality: str = "text", seeds: tuple[int, ...] = (0,),
                     steps: int = 60) -> Path:
    from core.study.design import StudySpec, make_study
    from core.study.source import SimulatedSource

    spec = StudySpec(name="small", source=SimulatedSource("configs/modes/vap_hard.yaml", "test", seeds, steps, 11),
                     questions=questions, training=4, practice=2, modality=modality)
    make_study(spec, folder, base=ROOT)
    return folder


def make_tiny_causal_lm(folder: Path) -> Path:
    """Save a random GPT-2 and a small byte-level BPE tokenizer (trained on a few scene sentences) to ``folder``."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from core.base.torchvision_compat import import_torchvision

    import_torchvision()
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = ["We look at Car_3. It sees 2 other entities. Car_3 is a tiro car. Answer: A B C D",
              "Question: What is Car_1's next action? A. Slow B. Normal C. Fast D. Stop"] * 20
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=["<eos>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>")
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=fast.vocab_size, n_positions=8192, n_embd=32, n_layer=1, n_head=2,
                     eos_token_id=fast.eos_token_id, bos_token_id=fast.eos_token_id)
    GPT2LMHeadModel(cfg).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder
