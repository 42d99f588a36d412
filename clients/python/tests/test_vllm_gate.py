"""The vLLM serving gate (vllm_gate.py, also `scripts/gate vllm`) as a test: two Managers on a real etcd, two vLLM
engines, every tier and both negative cases; it fails with the gate's JSON when any scenario fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("vllm")


def test_vllm_gate_passes(tmp_path):
    report = tmp_path / "gate.json"
    gate = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vllm_gate.py")
    run = subprocess.run([sys.executable, gate, "--json", str(report), "--workdir", str(tmp_path / "work")],
                         capture_output=True, text=True, timeout=1200)
    result = json.loads(report.read_text()) if report.exists() else {"stderr": run.stderr[-4000:]}
    assert run.returncode == 0 and result["passed"], json.dumps(result, indent=2)
    assert result["identicalOutputs"]
    assert result["cachedTokens"] == (result["promptTokens"] - 1) // 128 * 128
    assert {"PEER", "PEER_SSD", "LOCAL", "SSD"} <= set(result["tiers"])
