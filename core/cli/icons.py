"""``python main.py icons …``: generate icons with a local diffusion model and manage the icon library.

Sub-commands: ``generate``, ``list``, ``show``, ``accept``, ``reject``, ``import``, ``prompts``, ``model``,
``set-model``, ``sheet``, ``download``. torch/diffusers are imported only by ``generate`` (and ``download`` needs
network access, the only command that ever uses it).
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from pathlib import Path

from core.cli.render import image_format_problem
from core.cli.simulate import output_problem

# The icon library, the generator's models and prompts and the renderer are imported in the command bodies: `python
# main.py --help` imports every command module (core/cli/__init__.py).


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("icons", help="generate icons and manage the icon library",
                       description="Generate icons with a local Stable Diffusion model and manage the icon "
                                   "library (accepted icons replace the default art in renders and the map view).")
    p.add_argument("--library", type=Path, default=None,
                   help="icon library folder (default: <user data dir>/icons; env LOGICITY_DATA_DIR moves it)")
    isub = p.add_subparsers(dest="icons_command", metavar="ACTION")
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])

    g = isub.add_parser("generate", help="generate icons for one semantic into the library (as pending)")
    g.add_argument("--semantic", required=True, help="e.g. ambulance, gas_station, crossing (see `icons list`)")
    g.add_argument("--model", default=None,
                   help="diffusers folder or .safetensors file (default: the configured model)")
    g.add_argument("--n", type=int, default=4, help="number of images (default 4)")
    g.add_argument("--prompt", action="append", default=None,
                   help="subject description (repeatable; image k uses prompt k mod count); "
                        "default: drawn from the prompt bank")
    g.add_argument("--style", default=None, help="style suffix (default: the prompt bank's, '' for none)")
    g.add_argument("--negative", default=None, help="negative prompt (default: the prompt bank's)")
    g.add_argument("--steps", type=int, default=None, help="denoising steps (default: suggested for the model)")
    g.add_argument("--guidance", type=float, default=None, help="guidance scale (default: suggested)")
    g.add_argument("--seed", type=int, default=None, help="first seed; image k uses seed+k (default: random)")
    g.add_argument("--batch", type=int, default=1, help="images per batch (default 1)")
    g.add_argument("--size", type=int, default=None, help="width = height in pixels (default: model native)")
    g.add_argument("--scheduler", default="default",
                   help="default, euler, euler_a, dpmpp_2m, ddim or lcm")
    g.add_argument("--device", default="auto", choices=("auto", "cuda", "mps", "cpu"))
    g.add_argument("--dtype", default=None, choices=("float16", "float32", "bfloat16"),
                   help="default float16 on GPU, float32 on CPU")
    g.add_argument("--post", default=None, choices=("alpha", "tile", "none"),
                   help="post-processing (default from the prompt bank: alpha for sprites, tile for streets)")
    g.add_argument("--accept", action="store_true", help="mark the new icons accepted right away")
    g.add_argument("--quiet", action="store_true", help="no per-step progress")
    g.set_defaults(func=_generate)

    ls = isub.add_parser("list", help="list library icons")
    ls.add_argument("--semantic", default=None)
    ls.add_argument("--status", default=None, choices=("pending", "accepted", "rejected"))
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=_list)

    sh = isub.add_parser("show", help="print an icon's sidecar (prompt, seed, model, …)")
    sh.add_argument("id", help="icon id <semantic>/<name>")
    sh.set_defaults(func=_show)

    for name, status in (("accept", "accepted"), ("reject", "rejected")):
        a = isub.add_parser(name, help=f"mark icons {status}")
        a.add_argument("ids", nargs="+", help="icon ids <semantic>/<name>")
        a.set_defaults(func=_set_status, status=status)

    im = isub.add_parser("import", help="add your own PNGs (accepted) to the library")
    im.add_argument("semantic")
    im.add_argument("files", nargs="+", type=Path)
    im.set_defaults(func=_import)

    pr = isub.add_parser("prompts", help="show the prompt bank; --edit creates your editable copy")
    pr.add_argument("--semantic", default=None)
    pr.add_argument("--edit", action="store_true", help="copy the bank to the user data dir and print its path")
    pr.set_defaults(func=_prompts)

    m = isub.add_parser("model", help="show the configured model and what it is")
    m.set_defaults(func=_model)
    sm = isub.add_parser("set-model", help="remember a model path (diffusers folder or .safetensors)")
    sm.add_argument("path", nargs="?", default=None)
    sm.add_argument("--clear", action="store_true", help="forget the configured model")
    sm.set_defaults(func=_set_model)

    sheet = isub.add_parser("sheet", help="write a contact sheet PNG of the icons in use")
    sheet.add_argument("--out", type=Path, required=True)
    sheet.add_argument("--px-per-cell", type=int, default=8)
    sheet.set_defaults(func=_sheet)

    dl = isub.add_parser("download", help="explicitly download a diffusers model from the Hugging Face Hub")
    dl.add_argument("repo", help="e.g. stabilityai/sd-turbo")
    dl.add_argument("--out", type=Path, required=True, help="folder to write the model to")
    dl.add_argument("--set", action="store_true", help="also make it the configured model")
    dl.set_defaults(func=_download)


def _library(args):
    from core.render.library import IconLibrary

    return IconLibrary(args.library)


def _generate(args: argparse.Namespace) -> int:
    from core.icongen.generator import GenerationError, IconGenerator, request_from_bank, save_to_library
    from core.icongen.models import resolve_model, suggested_settings
    from core.render.semantics import parse_semantic

    try:
        semantic = parse_semantic(args.semantic)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    source = resolve_model(args.model)  # clear ModelError (incl. "no model configured") before heavy imports
    sug = suggested_settings(source)
    steps = args.steps if args.steps is not None else sug.steps
    guidance = args.guidance if args.guidance is not None else sug.guidance
    seed = args.seed if args.seed is not None else secrets.randbelow(2 ** 31)
    kw = dict(n=args.n, steps=steps, guidance=guidance, seed=seed, batch_size=args.batch,
              scheduler=args.scheduler, width=args.size, height=args.size, style=args.style,
              negative=args.negative)
    if args.post:
        kw["post"] = args.post
    req = request_from_bank(semantic, args.prompt, **kw)
    req.validate()
    lib = _library(args)
    print(f"model {source.name} ({source.kind}, {source.pipeline_class}); {sug.note}")
    print(f"{semantic}: {req.n} image(s), steps {req.steps}, guidance {req.guidance}, seeds {req.seed}.."
          f"{req.seed + req.n - 1}, library {lib.root}")
    gen = IconGenerator(source.path, device=args.device, dtype=args.dtype)
    saved = []
    tty = sys.stderr.isatty()

    def on_progress(p) -> None:
        if args.quiet or not p.batch:
            return
        first, last = p.batch[0] + 1, p.batch[-1] + 1
        imgs = f"image {first}" if first == last else f"images {first}-{last}"
        line = f"{imgs}/{p.images_total}  step {p.step}/{p.steps}  ({100 * p.fraction:.0f}%)"
        print(("\r" + line) if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)

    def on_image(icon) -> None:
        rec = save_to_library(lib, icon, semantic, "accepted" if args.accept else "pending")
        saved.append(rec)
        if tty and not args.quiet:
            print(file=sys.stderr)
        print(f"saved {rec.id}  seed {icon.seed}  {icon.image.width}x{icon.image.height}"
              + (f"  ({icon.meta['postprocess']['warning']})" if "warning" in icon.meta["postprocess"] else ""))

    try:
        res = gen.generate(req, on_progress=on_progress, on_image=on_image,
                           status=lambda m: print(m, file=sys.stderr))
    except KeyboardInterrupt:
        print(f"\ninterrupted: {len(saved)} image(s) were saved and are kept", file=sys.stderr)
        return 130
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"{len(saved)} image(s) saved before the error are kept", file=sys.stderr)
        return 1
    per = res.seconds / max(len(res.icons), 1)
    print(f"{len(res.icons)} icon(s) in {res.seconds:.1f} s ({per:.2f} s per icon incl. loading); "
          + ("accepted" if args.accept else f"review with `main.py icons list --semantic {semantic} --status "
                                            "pending`, then `icons accept ID`"))
    return 0


def _list(args: argparse.Namespace) -> int:
    recs = _library(args).list(args.semantic, args.status)
    if args.json:
        print(json.dumps([{"id": r.id, "status": r.status, "seed": r.seed, "prompt": r.prompt,
                           "png": str(r.png), "sidecar_error": r.sidecar_error} for r in recs], indent=2))
        return 0
    if not recs:
        print("no icons" + (f" for {args.semantic}" if args.semantic else "") + f" in {_library(args).root}")
        return 0
    for r in recs:
        seed = "" if r.seed is None else f"seed {r.seed}"
        print(f"{r.id:<48} {r.status:<9} {seed:<16} {r.prompt[:60]}")
        if r.sidecar_error:
            print(f"  warning: {r.sidecar_error}")
    bad = sum(1 for r in recs if r.sidecar_error)
    if bad:
        print(f"{bad} icon(s) with a sidecar problem (see the warnings above; fix or delete those .json files)",
              file=sys.stderr)
    return 0


def _show(args: argparse.Namespace) -> int:
    rec = _library(args).get(args.id)
    print(json.dumps(dict(rec.stored) if rec.stored is not None else dict(rec.meta), indent=2, ensure_ascii=False))
    if rec.sidecar_error:
        print(f"warning: {rec.sidecar_error}", file=sys.stderr)
    return 0


def _set_status(args: argparse.Namespace) -> int:
    lib = _library(args)
    for icon_id in args.ids:
        rec = lib.set_status(icon_id, args.status)
        print(f"{rec.id}: {rec.status}")
    return 0


def _import(args: argparse.Namespace) -> int:
    lib = _library(args)
    for f in args.files:
        rec = lib.import_image(args.semantic, f)
        print(f"imported {f} as {rec.id} (accepted)")
    return 0


def _prompts(args: argparse.Namespace) -> int:
    from core.icongen.prompts import PromptBank, ensure_user_copy
    from core.render.semantics import SEMANTICS, parse_semantic

    if args.edit:
        print(ensure_user_copy())
        return 0
    if args.semantic:
        try:
            sems = [parse_semantic(args.semantic)]
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        sems = list(SEMANTICS)
    bank = PromptBank.load()
    print(f"# {bank.source}")
    for sem in sems:
        e = bank[sem]
        print(f"{sem} (post: {e.post}; style: {e.style})")
        for d in e.descriptions:
            print(f"  - {d}")
    return 0


def _model(args: argparse.Namespace) -> int:
    from core.icongen.models import configured_model, resolve_model, suggested_settings

    path = configured_model()
    if path is None:
        from core.icongen.models import NO_MODEL_MESSAGE

        print(NO_MODEL_MESSAGE)
        return 1
    src = resolve_model(path)
    print(f"{src.path}\n  {src.kind}, {src.pipeline_class} ({src.family}); {suggested_settings(src).note}")
    return 0


def _set_model(args: argparse.Namespace) -> int:
    from core.icongen.models import resolve_model, set_configured_model, settings_path

    if args.clear:
        set_configured_model(None)
        print("model setting cleared")
        return 0
    if not args.path:
        print("error: give a PATH or --clear", file=sys.stderr)
        return 2
    src = resolve_model(args.path)
    set_configured_model(src.path)
    print(f"configured {src.path} ({src.kind}, {src.pipeline_class}) in {settings_path()}")
    return 0


def _sheet(args: argparse.Namespace) -> int:
    from core.render.icons import IconSet
    from core.render.sheet import icon_sheet

    if args.px_per_cell < 1:
        print("error: --px-per-cell must be >= 1", file=sys.stderr)
        return 2
    problem = output_problem(args.out, "sheet.png") or image_format_problem(args.out)
    if problem:  # checked before the library is loaded and the sheet painted
        print(f"error: --out {args.out}: {problem}", file=sys.stderr)
        return 2
    icons = IconSet.load(library=_library(args))
    try:
        icon_sheet(icons, px_per_cell=args.px_per_cell).save(args.out)
    except OSError as exc:
        print(f"error: could not write --out {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    n_lib = sum(1 for v in icons.from_library.values() if v)
    print(f"wrote {args.out} ({n_lib} semantic(s) from the library, the rest default art)")
    return 0


def _download(args: argparse.Namespace) -> int:
    """The only network access of the studio, and only on this explicit request."""
    from core.icongen.models import resolve_model, set_configured_model

    if os.environ.get("HF_HUB_OFFLINE") == "1":
        print("error: HF_HUB_OFFLINE=1 is set; unset it to download", file=sys.stderr)
        return 1
    if args.out.exists() and not args.out.is_dir():
        print(f"error: --out {args.out} is a file; give a folder to write the model to", file=sys.stderr)
        return 2
    import logging

    from huggingface_hub import HfApi, snapshot_download

    print(f"contacting the Hugging Face Hub for {args.repo}…", file=sys.stderr)
    hub_log = logging.getLogger("huggingface_hub")
    level = hub_log.level
    hub_log.setLevel(logging.ERROR)  # its retry warnings would bury the one-line error below
    try:
        files = HfApi().list_repo_files(args.repo)
        # one copy of each weight file: the fp16 variant where the repo has one (half the size; it is up-cast
        # on CPU), else the plain safetensors; never pickle files
        halves = {f.replace(".fp16.safetensors", ".safetensors") for f in files if f.endswith(".fp16.safetensors")}
        wanted = [f for f in files
                  if f.endswith((".json", ".txt")) or (f.endswith(".safetensors") and ".fp32." not in f
                                                      and "/" in f and f not in halves)]
        print(f"downloading {len(wanted)} files of {args.repo} to {args.out}…", file=sys.stderr)
        snapshot_download(args.repo, local_dir=str(args.out), allow_patterns=wanted)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - network/hub failures of any HTTP library: one line, no traceback
        print(f"error: could not download {args.repo}: {download_problem(exc)}", file=sys.stderr)
        return 1
    finally:
        hub_log.setLevel(level)
    src = resolve_model(args.out)
    if args.set:
        set_configured_model(src.path)
    print(f"ready: {src.path} ({src.pipeline_class})" + (" — now the configured model" if args.set else ""))
    return 0


def download_problem(exc: BaseException) -> str:
    """One line saying why a Hugging Face Hub download failed (no network, unknown or gated repository, ...)."""
    from huggingface_hub import errors as hf

    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, hf.GatedRepoError):
        return "the repository is gated: accept its licence on huggingface.co and log in (huggingface-cli login)"
    if isinstance(exc, hf.RepositoryNotFoundError):
        return "no such repository on the Hugging Face Hub (or it is private)"
    if isinstance(exc, hf.OfflineModeIsEnabled):
        return "offline mode is enabled (HF_HUB_OFFLINE); unset it to download"
    if isinstance(exc, hf.HfHubHTTPError):
        return f"the Hugging Face Hub answered with an error ({detail})"
    module = type(exc).__module__.split(".")[0]
    if isinstance(exc, (OSError, TimeoutError)) or module.startswith(("httpx", "httpcore", "requests", "urllib3")):
        return f"cannot reach the Hugging Face Hub ({type(exc).__name__}: {detail}); check the network connection"
    return f"{type(exc).__name__}: {detail}"
