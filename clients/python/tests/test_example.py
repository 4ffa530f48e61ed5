"""The README's example runs against the real server."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import HERE, KEYS, Server


def test_quickstart(server: Server) -> None:
    env = dict(os.environ, CONTEXTASM_URL=server.url, CONTEXTASM_API_KEY=KEYS["support"],
               PYTHONPATH=str(HERE.parent / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, str(HERE.parent / "examples" / "quickstart.py")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "refundable" in out.stdout
    assert "trust of refund-policy: 0.50 -> 0.55" in out.stdout
