"""Hostile input from outside, the way an attacker tries it: each case runs `ridge` as a separate
process under a 2 GiB address-space limit, and must end with exit status 2 and exactly one line
on stderr, never a traceback or an "internal error", and never a terminal escape echoed back.

The cases are the ones a reliability pass found (issue 15) and more like them, for every input
surface: command-line flags, config.json, catalogs, packs, saves, match files and the output.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None

ADDRESS_SPACE = 2 << 30
LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
         "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256,
         "max_position_embeddings": 8192}
GPU = '[gpus.g]\nname = "g"\nmemory_gib = {mem}\nbandwidth_tbps = {bw}\npeak_tflops = {{ bf16 = {peak} }}\n'
LONG = "a" * 10_000


# The limit is set by util-linux's prlimit, which then runs ridge: a Python preexec_fn would force
# subprocess off its fast spawn path (a fork of the whole test process, then the function, then
# exec) for each of the ~90 cases. Without prlimit, the preexec_fn sets the same limit.
PRLIMIT = shutil.which("prlimit")


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def limited(command: list[str], cwd: Path, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """`command` run under the address-space limit, with its own save folder in `cwd`."""
    env = {**os.environ, "RIDGE_SAVE_DIR": str(cwd / "data"), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("RIDGE_DEBUG", None)
    if PRLIMIT:
        command = [PRLIMIT, f"--as={ADDRESS_SPACE}", "--", *command]
    return subprocess.run(command, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE, timeout=120,
                          preexec_fn=_limit if resource and not PRLIMIT else None)


def ridge(*args: str, cwd: Path, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return limited([sys.executable, "-m", "app", *args], cwd, stdout)


@pytest.mark.skipif(resource is None, reason="no address-space limit without POSIX resource limits")
def test_every_case_runs_under_the_limit(tmp_path):
    probe = limited([sys.executable, "-c", "import resource; print(*resource.getrlimit(resource.RLIMIT_AS))"],
                    tmp_path)
    assert probe.stdout.split() == [str(ADDRESS_SPACE).encode()] * 2, probe.stderr


def _config(**changes) -> str:
    return json.dumps({**LLAMA, **changes})


# name -> text (str) or bytes, written into the case folder before the cases run
FILES: dict[str, str | bytes] = {
    "nan.json": _config().replace("4096", "NaN"),
    "inf.json": _config().replace("4096", "Infinity"),
    "neg-inf.json": _config().replace("4096", "-Infinity"),
    "huge.json": _config().replace("4096", "1" + "0" * 400),
    "list-type.json": _config(model_type=["llama"]),
    "dict-type.json": _config(model_type={"a": 1}),
    "deep-array.json": "[" * 100_000 + "]" * 100_000,
    "deep-object.json": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "deep-inside.json": _config(extra=json.loads("[" * 40 + "]" * 40)),
    "mixtral-experts.json": _config(model_type="mixtral", num_local_experts=2, num_experts_per_tok=8),
    "mixtral-zero.json": _config(model_type="mixtral", num_local_experts=0, num_experts_per_tok=0),
    "kv-heads.json": _config(num_key_value_heads=64),
    "kv-divide.json": _config(num_key_value_heads=5),
    "layers-1e30.json": _config(num_hidden_layers=10**30),
    "layers-float.json": _config(num_hidden_layers=32.5),
    "layers-bool.json": _config(num_hidden_layers=True),
    "layers-text.json": _config(num_hidden_layers="32"),
    "layers-negative.json": _config(num_hidden_layers=-1),
    "dense-replace.json": _config(model_type="deepseek_v3", n_routed_experts=256, num_experts_per_tok=8,
                                  moe_intermediate_size=2048, first_k_dense_replace=100, kv_lora_rank=512,
                                  qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128),
    "top-list.json": "[1, 2]",
    "not-utf8.json": b'{"model_type": "\xff"}',
    "empty.json": "",
    "cat-not-utf8.toml": b'[models.x]\nname = "\xff\xfe"\n',
    "cat-models-5.toml": "models = 5\n",
    "cat-gpus-list.toml": "gpus = [1, 2]\n",
    "cat-memory-nan.toml": GPU.format(mem="nan", bw=3.35, peak=989),
    "cat-bandwidth-inf.toml": GPU.format(mem=80, bw="inf", peak=989),
    "cat-peak-inf.toml": GPU.format(mem=80, bw=3.35, peak="inf"),
    "cat-memory-huge.toml": GPU.format(mem="1" + "0" * 30, bw=3.35, peak=989),
    "cat-memory-zero.toml": GPU.format(mem=0, bw=3.35, peak=989),
    "cat-escape-id.toml": '[models."\\u001b[2J"]\nname = "x"\n',
    "cat-deep.toml": "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "cat-kv-heads.toml": ('[models.m]\nname = "m"\nlayers = 2\nhidden = 64\nintermediate = 128\nheads = 4\n'
                          'kv_heads = 8\nhead_dim = 16\nvocab = 100\ncontext = 1024\n'),
    "cat-dense.toml": ('[models.m]\nname = "m"\nlayers = 2\nhidden = 64\nintermediate = 128\nheads = 4\n'
                       'kv_heads = 4\nhead_dim = 16\nvocab = 100\ncontext = 1024\nexperts = 4\n'
                       'experts_per_token = 2\nexpert_intermediate = 32\ndense_layers = 9\n'),
    "cat-layers-huge.toml": ('[models.m]\nname = "m"\nlayers = 1000000000000\nhidden = 64\nintermediate = 128\n'
                             'heads = 4\nkv_heads = 4\nhead_dim = 16\nvocab = 100\ncontext = 1024\n'),
    "pack-not-utf8.toml": b'[chapter]\ntitle = "\xff"\n',
    "pack-deep.toml": "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "pack-escape.toml": '[chapter]\ntitle = "\\u001b]0;pwned\\u0007"\n',
    "match-deep.toml": "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "match-not-utf8.toml": b"\xff\xfe",
    "match-garbage.toml": "kind = 5\n",
}

SOLVE = ("solve", "--model", "llama-3-8b")
ANSWER = ("answer", "two-phases-01", "--bottleneck", "decode-weights", "--lever", "speculative-decoding",
          "--gain", "2-4x", "--reason", "idle-flops", "--certainty", "high", "--no-record")
CASES: dict[str, tuple[str, ...]] = {
    # command-line flags
    "price 0": (*SOLVE, "--price", "0"),
    "price 1e308 on 4096 gpus": (*SOLVE, "--price", "1e308", "--gpus", "4096"),
    "price 1e307 json": (*SOLVE, "--price", "1e307", "--json"),
    "reserve 1e308": (*SOLVE, "--reserve-gib", "1e308"),
    "reserve negative": (*SOLVE, "--reserve-gib", "-1"),
    "mfu nan": (*SOLVE, "--mfu", "nan"),
    "mfu inf": (*SOLVE, "--mfu", "inf"),
    "mfu 1e999": (*SOLVE, "--mfu", "1e999"),
    "gpus arabic-indic": (*SOLVE, "--gpus", "١٢"),
    "gpus full-width": (*SOLVE, "--gpus", "１２"),
    "gpus underscore": (*SOLVE, "--gpus", "1_2"),
    "gpus 25 digits": (*SOLVE, "--gpus", "9" * 25),
    "gpus 5000": (*SOLVE, "--gpus", "5000"),
    "concurrency 0": (*SOLVE, "--concurrency", "0"),
    "prompt text": (*SOLVE, "--prompt", "ten"),
    "model with escape and newline": ("solve", "--model", "x\n\x1b[2Jy"),
    "weights with newline": (*SOLVE, "--weights", "x\ny"),
    "catalog 10,000 characters": (*SOLVE, "--catalog", LONG),
    "save-dir 10,000 characters (stats)": ("stats", "--save-dir", LONG),
    "save-dir 10,000 characters (check)": ("saves", "check", "--save-dir", LONG),
    "save-dir name over 255 bytes": ("stats", "--save-dir", "/tmp/" + "b" * 300),
    "profile name with an escape": ("stats", "--profile", "\x1b[2J"),
    "puzzle id with escape": ("puzzles", "show", "\x1b]0;x\x07"),
    "generate count arabic": ("puzzles", "generate", "--seed", "1", "--count", "٣"),
    "estimate arabic-indic": (*ANSWER, "--estimate", "tpot_seconds=١"),
    "estimate nan": (*ANSWER, "--estimate", "tpot_seconds=nan"),
    "estimate 1e999": (*ANSWER, "--estimate", "tpot_seconds=1e999"),
    "hints full-width": (*ANSWER, "--estimate", "tpot_seconds=0.01", "--hints", "１"),
    "host port arabic-indic": ("host", "--seed", "1", "--count", "3", "--port", "٨٣٠٠", "--headless"),
    "host seconds nan": ("host", "--seed", "1", "--count", "3", "--seconds", "nan", "--headless"),
    "host header deadline zero": ("host", "--seed", "1", "--count", "3", "--header-seconds", "0", "--headless"),
    "host body deadline inf": ("host", "--seed", "1", "--count", "3", "--body-seconds", "inf", "--headless"),
    "join address with an escape": ("join", "http://\x1b[2J", "--pin", "1234", "--name", "x"),
    "join pin with an escape": ("join", "http://127.0.0.1:1", "--pin", "12\x1b34", "--name", "x"),
    "join name with an escape": ("join", "http://127.0.0.1:1", "--pin", "1234", "--name", "x\x1b[2J"),
    "lab seed nan": ("lab", "run", "--seed", "nan"),
    # packs, through `ridge puzzles import`
    "pack not UTF-8": ("puzzles", "import", "pack-not-utf8.toml"),
    "pack deep": ("puzzles", "import", "pack-deep.toml"),
    "pack with an escape in its title": ("puzzles", "import", "pack-escape.toml"),
    "pack /dev/zero": ("puzzles", "import", "/dev/zero"),
    # config.json
    **{f"config {name}": ("solve", "--config", name) for name in FILES if name.endswith(".json")},
    "config /dev/zero": ("solve", "--config", "/dev/zero"),
    "config a folder": ("solve", "--config", "."),
    "config missing": ("solve", "--config", "missing.json"),
    "config 10,000 characters": ("solve", "--config", LONG),
    # catalogs
    **{f"catalog {name}": (*SOLVE, "--catalog", name) for name in FILES if name.startswith("cat-")},
    "catalog /dev/zero": (*SOLVE, "--catalog", "/dev/zero"),
    "catalog a folder": (*SOLVE, "--catalog", "."),
    # match files
    **{f"match {name}": ("match", "results", name) for name in FILES if name.startswith("match-")},
    "match /dev/zero": ("match", "results", "/dev/zero"),
    "match a folder": ("match", "results", "."),
    # saves
    "saves profile is /dev/zero": ("stats", "--save-dir", "zero-saves", "--profile", "Ada"),
    "saves profile is a pipe": ("stats", "--save-dir", "pipe-saves", "--profile", "Ada"),
    "saves profile is a pipe (answer)": (*ANSWER[:-1], "--estimate", "tpot_seconds=0.01", "--profile", "Ada",
                                         "--save-dir", "pipe-saves"),
    "config a pipe": ("solve", "--config", "pipe"),
    "catalog a pipe": (*SOLVE, "--catalog", "pipe"),
    "match a pipe": ("match", "results", "pipe"),
    "saves export to /dev/full": ("saves", "export", "--format", "csv", "--save-dir", "good-saves",
                                  "--output", "/dev/full"),
    "saves export to a folder": ("saves", "export", "--format", "csv", "--save-dir", "good-saves",
                                 "--output", "."),
    # the game: refused before it opens (it used to open, tell the problem in a notice and wait)
    "play with a file as the save folder": ("play", "--save-dir", "nan.json"),
    "play as an empty profile name": ("play", "--profile", ""),
}


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    for name, content in FILES.items():
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    os.mkfifo(folder / "pipe")  # a read that opened it blocking would hang until a writer came
    (folder / "pipe-saves").mkdir()
    os.mkfifo(folder / "pipe-saves" / "Ada.toml")
    (folder / "zero-saves").mkdir()
    (folder / "zero-saves" / "Ada.toml").symlink_to("/dev/zero")
    from saves.store import SaveStore
    from helpers.saves_worker import sample_attempt

    SaveStore(folder / "good-saves").record_attempt("Ada", sample_attempt(0))
    return folder


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_one_line_and_exit_2(case_dir, name):
    out = ridge(*CASES[name], cwd=case_dir)
    err = out.stderr.decode("utf-8", "replace")
    assert out.returncode == 2, (name, out.returncode, err[:500])
    assert len(err.splitlines()) == 1 and err.endswith("\n"), (name, err[:500])
    assert "internal error" not in err and "Traceback" not in err, (name, err[:500])
    assert b"\x1b" not in out.stderr + out.stdout, (name, err[:200])
    assert len(err) < 1200, (name, len(err))


def test_a_full_disk_on_stdout_is_one_line(case_dir):
    for args in (SOLVE, (*SOLVE, "--json"), ("puzzles", "list")):
        with open("/dev/full", "w") as full:
            out = ridge(*args, cwd=case_dir, stdout=full)
        err = out.stderr.decode()
        assert out.returncode == 2 and err.count("\n") == 1 and "No space left" in err, (args, err)
        assert "internal error" not in err


def test_no_escape_byte_from_a_config_reaches_the_screen(case_dir):
    path = case_dir / "escape-name.json"
    path.write_text(_config(_name_or_path="evil\x1b[31m\x1b]0;title\x07\u202eline\nbreak"), encoding="utf-8")
    for extra in ((), ("--json",)):
        out = ridge("solve", "--config", str(path), *extra, cwd=case_dir)
        assert out.returncode == 0, out.stderr
        assert b"\x1b" not in out.stdout and b"\x07" not in out.stdout and "\u202e".encode() not in out.stdout
    assert "evil" in out.stdout.decode()


def test_export_to_a_symlink_is_refused_and_leaves_both(case_dir):
    real, link = case_dir / "real.csv", case_dir / "link.csv"
    real.write_text("mine\n", encoding="utf-8")
    link.symlink_to(real)
    out = ridge("saves", "export", "--format", "csv", "--save-dir", "good-saves", "--output", str(link),
                cwd=case_dir)
    assert out.returncode == 2 and b"symbolic link" in out.stderr and out.stderr.count(b"\n") == 1, out.stderr
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "mine\n"


def test_a_deleted_attempt_is_still_reported_after_the_next_answer(case_dir):
    from saves.store import SaveStore
    from helpers.saves_worker import sample_attempt

    folder = case_dir / "cut-saves"
    store = SaveStore(folder)
    for i in range(40):
        store.record_attempt("Ada", sample_attempt(i))
    segment = folder / "Ada.attempts" / "000001.toml"
    text = segment.read_text(encoding="utf-8")
    segment.write_text(text[:text.rindex("[[attempts]]")], encoding="utf-8")
    out = ridge("answer", "two-phases-01", "--bottleneck", "decode-weights", "--lever", "speculative-decoding",
                "--gain", "2-4x", "--reason", "idle-flops", "--certainty", "high", "--estimate",
                "tpot_seconds=0.01", "--profile", "Ada", "--save-dir", str(folder), cwd=case_dir)
    err = out.stderr.decode()
    assert out.returncode == 2 and "ridge saves check" in err and err.count("\n") == 1, err
    check = ridge("saves", "check", "--save-dir", str(folder), cwd=case_dir)
    assert check.returncode == 1 and b"000001.toml: deleted" in check.stdout, check.stdout


def test_the_crash_log_honours_save_dir(tmp_path, monkeypatch, capsys):
    """A bug (not bad input) is one line naming the log, and the log is in the --save-dir folder."""
    import puzzles.stats
    from app.cli import main

    def broken(*args, **kwargs):
        raise RuntimeError("a bug\nwith a second line")

    monkeypatch.setattr(puzzles.stats, "derive", broken)
    monkeypatch.delenv("RIDGE_DEBUG", raising=False)
    folder = tmp_path / "elsewhere"
    assert main(["stats", "--save-dir", str(folder)]) == 1
    err = capsys.readouterr().err
    log = folder / "logs" / "ridge.log"
    assert err.count("\n") == 1 and "internal error" in err and str(log) in err, err
    assert "RuntimeError: a bug" in log.read_text(encoding="utf-8")
