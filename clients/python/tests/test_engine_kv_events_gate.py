"""The KV-events gate (events_gate.py, also `scripts/gate events`) as a test: it fails with the gate's JSON when any
block's events, the sequence or the replay do not match."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("vllm")


def test_events_gate_passes(tmp_path):
    report = tmp_path / "gate.json"
    gate = os.path.join(os.path.dirname(os.path.abspath(__file__)), "events_gate.py")
    run = subprocess.run([sys.executable, gate, "--json", str(report), "--workdir", str(tmp_path / "work")],
                         capture_output=True, text=True, timeout=600)
    result = json.loads(report.read_text()) if report.exists() else {"stderr": run.stderr[-4000:]}
    assert run.returncode == 0 and result["ok"], json.dumps(result, indent=2)
    assert result["mismatches"] == [] and result["blocks"] > 0 and result["moved"] > 0
    assert result["package"]["name"] == "vllm"
