"""`ridge serve` on a free loopback port answers HTTP and stops cleanly; other hosts are named."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from app.commands.serve import is_loopback, reach_line


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"ridge serve exited early: {proc.communicate()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("ridge serve did not start listening")


def test_serve_answers_http_and_stops_cleanly(tmp_path):
    port = free_port()
    env = {**os.environ, "RIDGE_SAVE_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port), "--save-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for_port(port, proc)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert response.status == 200
            page = response.read().decode("utf-8")
        assert "Ridge" in page and f"ws://127.0.0.1:{port}/ws" in page
    finally:
        proc.terminate()
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hang is the failure being tested
            proc.kill()
            proc.communicate()
            pytest.fail("ridge serve did not stop within 10 s of SIGTERM")
    assert proc.returncode is not None
    assert f"Listening on http://127.0.0.1:{port} (this machine only)" in out
    assert "Traceback" not in err


def test_who_can_reach_it_is_said_plainly():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20")
    line = reach_line("0.0.0.0", 8000, "http://192.168.1.20:8000")
    assert line.startswith("Listening on 0.0.0.0:8000: anyone who can reach this machine on port 8000 can play")
    assert "this machine only" in reach_line("127.0.0.1", 8000, "http://127.0.0.1:8000")


def test_a_busy_port_is_one_clear_line(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "app", "serve", "--port", str(port), "--save-dir",
                               str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith(f"ridge serve: error: cannot listen on 127.0.0.1:{port}")
