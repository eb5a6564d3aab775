"""Language-model runs on a study: batch export/import, an OpenAI-compatible HTTP endpoint, a local model folder.

Why a journal per run (``llm/<name>.jsonl``, the same format as a participant's): a long run against a paid or
rate-limited endpoint is interrupted sooner or later; every reply is committed (fsync) as it arrives, with the
raw text, so a rerun continues at the first unanswered question and the report scores models exactly like
humans. Unparseable replies are committed with ``answer: null`` and counted separately.

HTTP uses only the standard library (``urllib``): POST ``{base_url}/chat/completions`` with the model name and the
prompt as one user message, temperature 0; the key comes from an environment variable (never a file or the
command line). Retries: connection errors, 408/409/429 and 5xx, with exponential back-off (``Retry-After``
honoured); rate limit: at most ``rpm`` requests per minute.
"""
from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, cast

from core.base.errors import LogiCityError
from core.base.torchvision_compat import import_torchvision
from core.io.fileio import atomic_write_text
from core.study.design import Study
from core.study.journal import Journal, journal_path
from core.study.prompts import build_prompt, demos_for, parse_answer

# torch and transformers are imported by TransformersModel: the API back ends need neither.

__all__ = ["LLMError", "RunOptions", "run_name", "export_batch", "import_batch", "run_backend", "OpenAIChat",
           "TransformersModel"]


class LLMError(LogiCityError):
    """A model run that cannot go on (endpoint refuses, missing key, unreadable import file)."""


@dataclass(frozen=True)
class RunOptions:
    k: int = 5
    name: str | None = None
    max_tokens: int = 8
    limit: int | None = None          # answer at most this many questions in this run (None: all)


def run_name(model: str, k: int) -> str:
    """Journal name of a model run: the model name made file-safe, plus the shot count."""
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", model.strip()).strip("._-") or "model"
    return f"{base[:50]}-{k}shot"


def _prompts(study: Study, k: int) -> list[tuple[str, str]]:
    demos = demos_for(study, k)
    return [(q.id, build_prompt(q, demos)) for q in study.test]


# ---- offline batch -------------------------------------------------------------------------------------------

def export_batch(study: Study, out: Path, model: str, k: int = 5, max_tokens: int = 8) -> int:
    """Write one request per test question in the OpenAI batch format (``custom_id`` = question id, body = a
    chat completion); any other tool can read ``body.messages[0].content`` as the prompt. Returns the count."""
    lines = []
    for qid, prompt in _prompts(study, k):
        lines.append(json.dumps({"custom_id": qid, "method": "POST", "url": "/v1/chat/completions",
                                 "body": {"model": model, "temperature": 0, "max_tokens": max_tokens,
                                          "messages": [{"role": "user", "content": prompt}]}}, ensure_ascii=False))
    atomic_write_text(out, "\n".join(lines) + "\n")
    return len(lines)


def _reply_of(obj: dict[str, Any]) -> tuple[str | None, str | None]:
    """(question id, reply text) of one line of a batch result, in the OpenAI batch output format or a plain
    ``{"custom_id"|"question"|"id": ..., "response"|"answer"|"text"|"output": ...}``."""
    qid = obj.get("custom_id", obj.get("question", obj.get("id")))
    resp = obj.get("response")
    if isinstance(resp, dict):
        body = resp.get("body", resp)
        try:
            return qid, body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            try:
                return qid, body["choices"][0]["text"]
            except (KeyError, IndexError, TypeError):
                return qid, None
    for key in ("response", "answer", "text", "output", "completion"):
        if isinstance(obj.get(key), str):
            return qid, obj[key]
    return qid, None


def import_batch(study: Study, src: Path, name: str, meta: dict[str, Any] | None = None) -> tuple[int, int]:
    """Commit the replies of a batch result file to the run's journal; returns (new answers, unparseable)."""
    try:
        text = Path(src).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LLMError(f"cannot read the batch result: {exc}", src) from None
    known = {q.id for q in study.test}
    added = bad = 0
    with Journal(journal_path(study.llm_dir, name), name, study.bank_sha256, kind="llm", meta=meta) as j:
        done = j.answers()
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LLMError(f"not JSON: {exc.msg}", src, n, exc.colno) from None
            qid, reply = _reply_of(obj) if isinstance(obj, dict) else (None, None)
            if qid not in known:
                raise LLMError(f"unknown question id {qid!r} (not a test question of this study)", src, n)
            if qid in done:
                continue
            letter = parse_answer(reply)
            j.answer("test", qid, letter, None, raw=reply)
            done = j.answers()
            added += 1
            bad += letter is None
    return added, bad


# ---- live back-ends ------------------------------------------------------------------------------------------

class OpenAIChat:
    """An OpenAI-compatible chat-completions endpoint over urllib (see the module docstring)."""

    RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}

    def __init__(self, base_url: str, model: str, key_env: str = "OPENAI_API_KEY", *, rpm: float = 60.0,
                 retries: int = 5, backoff_s: float = 1.0, timeout_s: float = 60.0, max_tokens: int = 8,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.key = os.environ.get(key_env, "")
        if not self.key:
            raise LLMError(f"no API key: set the environment variable {key_env} (the key is never read from "
                           "a file or the command line)")
        self.interval = 60.0 / rpm if rpm > 0 else 0.0
        self.retries, self.backoff_s, self.timeout_s, self.max_tokens = retries, backoff_s, timeout_s, max_tokens
        self.sleep = sleep
        self._last = 0.0
        self.requests = 0

    def _throttle(self) -> None:
        wait = self._last + self.interval - time.monotonic()
        if wait > 0:
            self.sleep(wait)
        self._last = time.monotonic()

    def __call__(self, prompt: str) -> str:
        body = json.dumps({"model": self.model, "temperature": 0, "max_tokens": self.max_tokens,
                           "messages": [{"role": "user", "content": prompt}]}).encode("utf-8")
        last = ""
        for attempt in range(self.retries + 1):
            self._throttle()
            req = urllib.request.Request(self.url, data=body, method="POST", headers={
                "Content-Type": "application/json", "Authorization": f"Bearer {self.key}"})
            delay = self.backoff_s * (2 ** attempt)
            try:
                self.requests += 1
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    data = json.loads(resp.read().decode("utf-8"))
                msg = data["choices"][0]["message"]
                return str(msg.get("content") or "")
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}: {exc.read()[:300].decode('utf-8', 'replace')}"
                if exc.code not in self.RETRY_STATUS:
                    raise LLMError(f"{self.url}: {last}") from None
                ra = exc.headers.get("Retry-After") if exc.headers else None
                if ra:
                    try:
                        delay = max(delay, float(ra))
                    except ValueError:
                        pass
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = str(getattr(exc, "reason", exc))
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise LLMError(f"{self.url}: unexpected reply ({exc!r})") from None
            if attempt < self.retries:
                self.sleep(delay)
        raise LLMError(f"{self.url}: gave up after {self.retries + 1} tries ({last})")


class TransformersModel:
    """A local causal language model folder (``save_pretrained`` layout), loaded offline. ``mode``: ``generate``
    (greedy, then :func:`parse_answer`, as for an API model) or ``logits`` (the option letter whose token is
    likeliest after "Answer:", always an option)."""

    def __init__(self, folder: str | Path, mode: str = "generate", max_tokens: int = 8) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch

        import_torchvision()   # transformers imports torchvision when present; the PyPI build needs the shim here
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder = Path(folder)
        if not (folder / "config.json").is_file():
            raise LLMError("not a transformers model folder (no config.json)", folder)
        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
        self.model.eval()
        self.mode = mode
        self.max_tokens = max_tokens
        self.letter_ids = []
        for letter in "ABCD":
            ids = self.tok.encode(" " + letter, add_special_tokens=False) or self.tok.encode(letter,
                                                                                             add_special_tokens=False)
            self.letter_ids.append(ids[-1])

    def __call__(self, prompt: str) -> str:
        torch = self.torch
        enc = self.tok(prompt, return_tensors="pt")
        limit = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", None)
        if limit is not None:   # keep the end of a prompt longer than the context (the question is at the end)
            keep = int(limit) - (1 if self.mode == "logits" else self.max_tokens)
            enc = {k: v[:, -keep:] for k, v in enc.items()}
        with torch.no_grad():
            if self.mode == "logits":
                logits = self.model(**enc).logits[0, -1]
                return "ABCD"[int(torch.argmax(logits[self.letter_ids]))]
            pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.tok.eos_token_id
            out = self.model.generate(**enc, max_new_tokens=self.max_tokens, do_sample=False, pad_token_id=pad)
        # one sequence decodes to one string (a batch would give a list)
        return cast(str, self.tok.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True))


def run_backend(study: Study, ask: Callable[[str], str], name: str, opts: RunOptions, *,
                meta: dict[str, Any] | None = None, progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> tuple[int, int]:
    """Ask every test question not yet in the run's journal; each reply is committed before the next request.
    Returns (answered in this call, unparseable among them)."""
    prompts = _prompts(study, opts.k)
    added = bad = 0
    with Journal(journal_path(study.llm_dir, name), name, study.bank_sha256, kind="llm", meta=meta) as j:
        done = set(j.answers())
        todo = [(q, p) for q, p in prompts if q not in done]
        if opts.limit is not None:
            todo = todo[:opts.limit]
        for i, (qid, prompt) in enumerate(todo):
            if cancelled is not None and cancelled():
                break
            t0 = time.perf_counter()
            reply = ask(prompt)
            letter = parse_answer(reply)
            j.answer("test", qid, letter, int(1000 * (time.perf_counter() - t0)), raw=reply)
            added += 1
            bad += letter is None
            if progress is not None:
                progress(len(done) + i + 1, len(prompts))
    return added, bad


def iter_unparsed(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("kind") == "answer" and r.get("answer") is None]
