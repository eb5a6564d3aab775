"""``python main.py study make|report|llm``: human-study and LLM evaluation on VAP questions (docs/study.md)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from core.base.paths import ROOT
from core.study.design import StudySpec, load_study, make_study, parse_seeds
from core.study.source import ACTION_LETTERS, ACTION_WORDS, SimulatedSource
from core.study.source_vap import VapDatasetSource

# The report, the LLM back ends and tqdm are imported in the command bodies: `python main.py --help` imports every
# command module (core/cli/__init__.py).


def _seeds(text: str) -> tuple[int, ...]:
    try:
        return parse_seeds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help="human-study sessions and LLM evaluation on VAP questions",
                       description="Make a study (question bank + design), score it, or run a language model on it.")
    ss = p.add_subparsers(dest="study_command", metavar="SUBCOMMAND")
    m = ss.add_parser("make", help="make a study folder (study.yaml + questions.jsonl)",
                      description="Sample questions from simulated episodes of a mode. Defaults reproduce the "
                                  "paper's mini test: 117 questions on tiro/reckless cars in hard VAP mode.")
    m.add_argument("--out", type=Path, required=True, help="new study folder")
    m.add_argument("--name", default="vap-mini-test")
    m.add_argument("--mode", default="configs/modes/vap_hard.yaml", help="mode file (relative to the repository)")
    m.add_argument("--vap-dataset", type=Path, default=None, metavar="DIR",
                   help="take questions from a VAP dataset (main.py vap generate) instead of simulating; "
                        "--split picks its stage, --min-step its first frame")
    m.add_argument("--split", default="test", help="agent set split of the mode (train/val/test)")
    m.add_argument("--seeds", type=_seeds, default=(0, 1, 2, 3, 4), help="worlds to simulate, e.g. 0-4")
    m.add_argument("--steps", type=int, default=100)
    m.add_argument("--min-step", type=int, default=11, help="first state asked about (default 11)")
    m.add_argument("--questions", type=int, default=117)
    m.add_argument("--concepts", default="tiro,reckless", help="comma list; agents with any of them ('' = all)")
    m.add_argument("--all-agents", action="store_true", help="ask about pedestrians too (default: cars only)")
    m.add_argument("--modality", choices=("text", "image", "both"), default="text")
    m.add_argument("--training", type=int, default=5, help="training documents shown with answers")
    m.add_argument("--practice", type=int, default=4, help="practice questions with feedback")
    m.add_argument("--sample-seed", type=int, default=0)
    m.add_argument("--order-seed", type=int, default=0)
    m.add_argument("--same-order", action="store_true", help="every participant sees the same order")
    m.add_argument("--time-limit", type=float, default=None, metavar="S", help="seconds per question (default none)")
    m.set_defaults(func=run_make)
    r = ss.add_parser("report", help="score a study: Table 4 layout, kappa, exports")
    r.add_argument("--study", type=Path, required=True)
    r.add_argument("--csv", type=Path, default=None, help="long-format CSV, one row per answer")
    r.add_argument("--jsonl", type=Path, default=None, help="long-format JSONL, one row per answer")
    r.add_argument("--confusion", action="store_true", help="print each rater's confusion matrix")
    r.set_defaults(func=run_report)
    l = ss.add_parser("llm", help="evaluate a language model on a study",
                      description="k-shot multiple-choice prompts; every reply is journalled, a rerun resumes.")
    l.add_argument("--study", type=Path, required=True)
    l.add_argument("--backend", choices=("jsonl-export", "jsonl-import", "openai", "transformers"), required=True)
    l.add_argument("--k", type=int, default=5, help="demonstrations (default 5; 4 or more cover every option)")
    l.add_argument("--model", default=None, help="model name (openai, jsonl-export) or folder (transformers)")
    l.add_argument("--name", default=None, help="run name (journal llm/NAME.jsonl); default from the model")
    l.add_argument("--out", type=Path, default=None, help="jsonl-export: the request file to write")
    l.add_argument("--input", type=Path, default=None, help="jsonl-import: the batch result file")
    l.add_argument("--base-url", default="https://api.openai.com/v1", help="openai: endpoint base URL")
    l.add_argument("--api-key-env", default="OPENAI_API_KEY", help="openai: environment variable with the key")
    l.add_argument("--rpm", type=float, default=60.0, help="openai: requests per minute at most")
    l.add_argument("--retries", type=int, default=5, help="openai: retries per question")
    l.add_argument("--max-tokens", type=int, default=8)
    l.add_argument("--transformers-mode", choices=("generate", "logits"), default="generate")
    l.add_argument("--limit", type=int, default=None, help="answer at most N questions in this run")
    l.set_defaults(func=run_llm)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def run_make(args: argparse.Namespace) -> int:
    concepts = tuple(c.strip() for c in args.concepts.split(",") if c.strip())
    source: VapDatasetSource | SimulatedSource
    if args.vap_dataset is not None:
        source = VapDatasetSource(str(args.vap_dataset.resolve()), args.split, args.min_step)
    else:
        source = SimulatedSource(args.mode, args.split, args.seeds, args.steps, args.min_step)
    spec = StudySpec(args.name, source,
                     args.questions, concepts, not args.all_agents, args.sample_seed, args.modality, args.training,
                     args.practice, args.order_seed, not args.same_order, args.time_limit)
    spec.check()
    from tqdm import tqdm

    bar = tqdm(total=0, unit="step", file=sys.stderr, dynamic_ncols=True)

    def progress(stage: str, done: int, total: int) -> None:
        if bar.desc != stage:
            bar.set_description_str(stage, refresh=False)
            bar.reset(total=total)
        bar.update(done - bar.n)

    try:
        study = make_study(spec, args.out, base=ROOT, progress=progress)
    finally:
        bar.close()
    counts = study.test

    per = ", ".join(f"{w} {sum(q.truth == a for q in counts)}" for a, w in enumerate(ACTION_WORDS))
    print(f"study {study.folder}: {len(counts)} test questions ({per}), "
          f"{len(study.by_role('training'))} training, {len(study.by_role('practice'))} practice; "
          f"modality {spec.modality}")
    return 0


def run_report(args: argparse.Namespace) -> int:
    from core.study.report import build_report

    study = load_study(args.study)
    rep = build_report(study)
    if not rep.raters:
        print(f"study {study.folder}: no answers yet (responses/ and llm/ hold no journals)")
    print(rep.table_text())
    if args.confusion:
        for s in rep.scores:
            print(f"\n{s.name}: rows = truth, columns = answer")
            print("        " + " ".join(f"{l:>6}" for l in ACTION_LETTERS) + "   none")
            for w, row in zip(ACTION_WORDS, s.confusion):
                print(f"{w:<8}" + " ".join(f"{int(v):>6}" for v in row))
    if args.csv or args.jsonl:
        rep.export(args.csv, args.jsonl)
        print(f"exported {len(rep.long_rows())} answers" + (f" to {args.csv}" if args.csv else "")
              + (f" and {args.jsonl}" if args.jsonl else ""))
    return 0


def run_llm(args: argparse.Namespace) -> int:
    from core.study.llm import (
        OpenAIChat,
        RunOptions,
        TransformersModel,
        export_batch,
        import_batch,
        run_backend,
        run_name,
    )
    from core.study.report import build_report

    study = load_study(args.study)
    n_train = len(study.by_role("training"))
    if args.backend != "jsonl-import" and not 0 <= args.k <= n_train:   # an import builds no prompt
        print(f"error: --k must be between 0 and the study's {n_train} training documents, got {args.k}",
              file=sys.stderr)
        return 2
    model = args.model or ""
    if args.backend == "jsonl-export":
        if args.out is None:
            print("error: jsonl-export needs --out FILE", file=sys.stderr)
            return 2
        n = export_batch(study, args.out, model or "MODEL", args.k, args.max_tokens)
        print(f"wrote {n} requests ({args.k}-shot) to {args.out}")
        return 0
    if args.backend in ("openai", "transformers") and not model:
        print(f"error: --backend {args.backend} needs --model", file=sys.stderr)
        return 2
    name = args.name or run_name(Path(model).name if args.backend == "transformers" else (model or "import"), args.k)
    meta = {"backend": args.backend, "model": model, "k": args.k}
    if args.backend == "jsonl-import":
        if args.input is None:
            print("error: jsonl-import needs --input FILE", file=sys.stderr)
            return 2
        added, bad = import_batch(study, args.input, name, meta)
    else:
        ask: Callable[[str], str]
        if args.backend == "openai":
            meta["base_url"] = args.base_url
            ask = OpenAIChat(args.base_url, model, args.api_key_env, rpm=args.rpm, retries=args.retries,
                             max_tokens=args.max_tokens)
        else:
            meta["transformers_mode"] = args.transformers_mode
            ask = TransformersModel(model, args.transformers_mode, args.max_tokens)
        from tqdm import tqdm

        bar = tqdm(total=len(study.test), unit="q", file=sys.stderr, dynamic_ncols=True)

        def progress(done: int, total: int) -> None:
            bar.update(done - bar.n)

        try:
            added, bad = run_backend(study, ask, name, RunOptions(args.k, name, args.max_tokens, args.limit),
                                     meta=meta, progress=progress)
        finally:
            bar.close()
    print(f"run {name}: {added} new answers ({bad} unparseable); journal {study.llm_dir / (name + '.jsonl')}")
    print(build_report(study).table_text())
    return 0
