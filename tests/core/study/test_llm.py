"""LLM runs: a stub OpenAI-compatible server on 127.0.0.1 (retries, rate limit, resume), batch export/import, and
a tiny random-weight transformers model built here (no downloads)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.study.design import load_study
from core.study.journal import read_journal
from core.study.llm import LLMError, OpenAIChat, RunOptions, export_batch, import_batch, run_backend
from core.study.report import build_report


class _Stub(BaseHTTPRequestHandler):
    """Replies in turn: 429 (Retry-After 0) on the very first request, 503 on every 5th, otherwise a reply that
    is the letter of the question's answer ('C'), an option word, or nonsense."""

    log_message = lambda *a: None  # noqa: E731

    def do_POST(self):
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        srv.seen.append({"auth": self.headers.get("Authorization"), "body": body})
        n = len(srv.seen)
        if n == 1:
            self.send_response(429)
            self.send_header("Retry-After", "0")
            self.end_headers()
            return
        if n % 5 == 0:
            self.send_response(503)
            self.end_headers()
            return
        if srv.fail_after is not None and srv.replies >= srv.fail_after:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(b'{"error": "quota"}')
            return
        srv.replies += 1
        text = ["C", "The answer is Stop.", "I cannot tell"][srv.replies % 3]
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture()
def stub_server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    srv.seen, srv.replies, srv.fail_after = [], 0, None
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_openai_backend_retries_parses_and_resumes(small_study, stub_server, monkeypatch):
    monkeypatch.setenv("STUDY_TEST_KEY", "sk-test")
    study = load_study(small_study)
    n = len(study.test)
    url = f"http://127.0.0.1:{stub_server.server_address[1]}/v1"
    sleeps: list[float] = []
    ask = OpenAIChat(url, "stub-model", "STUDY_TEST_KEY", rpm=0, retries=3, backoff_s=0.001, sleep=sleeps.append)
    stub_server.fail_after = 5     # the "endpoint" stops after 5 replies: the run is interrupted
    with pytest.raises(LLMError, match="HTTP 400"):
        run_backend(study, ask, "stub-4shot", RunOptions(k=4))
    path = study.llm_dir / "stub-4shot.jsonl"
    first = [r for r in read_journal(path) if r.get("kind") == "answer"]
    assert len(first) == 5                     # every reply before the failure is committed
    stub_server.fail_after = None
    added, bad = run_backend(study, ask, "stub-4shot", RunOptions(k=4))
    answers = [r for r in read_journal(path) if r.get("kind") == "answer"]
    assert added == n - 5 and len(answers) == n and len({r["question"] for r in answers}) == n
    assert stub_server.replies == n            # no question asked twice after the resume
    assert all(s["auth"] == "Bearer sk-test" for s in stub_server.seen)
    assert any(s >= 0.001 for s in sleeps)     # backed off after 429/503
    body = stub_server.seen[-1]["body"]
    assert body["model"] == "stub-model" and body["temperature"] == 0
    assert body["messages"][0]["content"].count("Answer:") == 5   # 4 demos + the question
    parsed = {r["raw"]: r["answer"] for r in answers}
    assert parsed.get("C") == "C" and parsed.get("The answer is Stop.") == "D" and parsed.get("I cannot tell", 0) is None
    rep = build_report(study)
    s = next(x for x in rep.scores if x.name == "stub-4shot")
    assert s.kind == "llm" and s.none == sum(r["answer"] is None for r in answers) > 0
    assert s.answered == n


def test_openai_backend_rate_limit_spaces_requests(small_study, stub_server, monkeypatch):
    monkeypatch.setenv("STUDY_TEST_KEY", "k")
    study = load_study(small_study)
    waits: list[float] = []
    url = f"http://127.0.0.1:{stub_server.server_address[1]}"
    ask = OpenAIChat(url, "m", "STUDY_TEST_KEY", rpm=600, retries=3, backoff_s=0.0, sleep=waits.append)
    run_backend(study, ask, "rl", RunOptions(k=4, limit=3))
    assert waits and all(0 < w <= 0.1 + 1e-6 for w in waits if w > 0)   # 600 rpm = one request per 0.1 s


def test_missing_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(LLMError, match="NO_SUCH_KEY_VAR"):
        OpenAIChat("http://127.0.0.1:9", "m", "NO_SUCH_KEY_VAR")


def test_batch_export_then_import(small_study, tmp_path):
    study = load_study(small_study)
    out = tmp_path / "req.jsonl"
    assert export_batch(study, out, "gpt-x", k=4) == len(study.test)
    reqs = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["custom_id"] for r in reqs] == [q.id for q in study.test]
    # a result file in the OpenAI batch output format: right answer on every other question, one garbage reply
    truth = {q.id: q for q in study.test}
    res = []
    for i, r in enumerate(reqs):
        q = truth[r["custom_id"]]
        text = q.truth_word if i % 2 == 0 else ("hmm" if i == 1 else "A")
        res.append({"custom_id": q.id, "response": {"status_code": 200,
                    "body": {"choices": [{"message": {"content": text}}]}}})
    src = tmp_path / "res.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in res) + "\n")
    added, bad = import_batch(study, src, "gpt-x-4shot")
    assert (added, bad) == (len(reqs), 1)
    assert import_batch(study, src, "gpt-x-4shot") == (0, 0)          # importing again adds nothing
    s = next(x for x in build_report(study).scores if x.name == "gpt-x-4shot")
    expect = sum(1 for i, r in enumerate(reqs) if i % 2 == 0 or truth[r["custom_id"]].truth == 0 and i != 1)
    assert int(s.correct.sum()) == expect and s.none == 1
    bad_src = tmp_path / "bad.jsonl"
    bad_src.write_text('{"custom_id": "nope", "answer": "A"}\n')
    with pytest.raises(LLMError, match="unknown question id"):
        import_batch(study, bad_src, "x")


def test_tiny_random_transformers_model(small_study, tiny_causal_lm):
    from core.study.llm import TransformersModel

    study = load_study(small_study)
    for mode in ("logits", "generate"):
        model = TransformersModel(tiny_causal_lm, mode=mode, max_tokens=4)
        added, bad = run_backend(study, model, f"tiny-{mode}", RunOptions(k=4, limit=3))
        assert added == 3
        recs = [r for r in read_journal(study.llm_dir / f"tiny-{mode}.jsonl") if r.get("kind") == "answer"]
        assert len(recs) == 3 and all(isinstance(r["raw"], str) for r in recs)
        if mode == "logits":
            assert bad == 0 and all(r["answer"] in "ABCD" for r in recs)
