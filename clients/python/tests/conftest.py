"""Starts the real server for the tests: `contextasm serve` on a free
loopback port, the binary from CONTEXTASM_BIN or built from the
repository with go. Without either the tests are skipped, loudly; under
CI=true they fail."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterator, List

import pytest

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
KEYS = {"support": "py-support-key-0001", "all": "py-everything-key-02", "other": "py-other-tenant-key3"}
KEYS_DOC = {"keys": [
    {"key": KEYS["support"], "tenant": "acme", "roles": ["support"]},
    {"key": KEYS["all"], "tenant": "acme", "roles": ["*"]},
    {"key": KEYS["other"], "tenant": "beta", "roles": ["support"]},
]}


class Server:
    def __init__(self, url: str, proc: "subprocess.Popen[str]", log: List[str]) -> None:
        self.url = url
        self.proc = proc
        self.log = log


def _binary(tmp: str) -> str:
    if os.environ.get("CONTEXTASM_BIN"):
        return os.environ["CONTEXTASM_BIN"]
    go = shutil.which("go")
    if go is None:
        msg = "neither CONTEXTASM_BIN nor go: the client's tests need the real server"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        print(f"\n*** {msg}: SKIPPED ***", file=sys.stderr)
        pytest.skip(msg)
    out = os.path.join(tmp, "contextasm")
    subprocess.run([go, "build", "-o", out, "./cmd/contextasm"], cwd=ROOT, check=True)
    return out


def start(binary: str, *args: str) -> Server:
    env = dict(os.environ, CONTEXTASM_KEYS=json.dumps(KEYS_DOC))
    proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", *args], env=env,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        proc.kill()
        raise RuntimeError(f"serve did not start: {line}{proc.stderr.read()}")
    log: List[str] = []
    threading.Thread(target=lambda: log.extend(proc.stderr or []), daemon=True).start()
    return Server(m.group(1), proc, log)


@pytest.fixture(scope="session")
def binary() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        yield _binary(tmp)


@pytest.fixture(scope="session")
def server(binary: str) -> Iterator[Server]:
    s = start(binary, "--templates", str(HERE / "testdata" / "templates"))
    yield s
    s.proc.terminate()
    assert s.proc.wait(timeout=20) == 0, "".join(s.log)
