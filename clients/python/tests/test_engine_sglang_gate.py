"""The SGLang gate (sglang_gate.py, also `scripts/gate sglang`) as a test: two processes with OrbitKV as SGLang's
HiCache L3 through one real Manager; it fails with the gate's JSON when any check fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("sglang.srt.mem_cache.hicache_storage")


def test_sglang_gate_passes(tmp_path):
    report = tmp_path / "gate.json"
    gate = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sglang_gate.py")
    run = subprocess.run([sys.executable, gate, "--json", str(report), "--workdir", str(tmp_path / "work")],
                         capture_output=True, text=True, timeout=900)
    result = json.loads(report.read_text()) if report.exists() else {"stderr": run.stderr[-4000:]}
    assert run.returncode == 0 and result["ok"], json.dumps(result, indent=2)
    assert result["package"] == {"name": "sglang", "version": "0.5.23"}
    assert result["blocks"] == result["pages"] == 300 and result["mismatches"] == 0
    assert result["otherRankHits"] == 0 and result["otherLayoutHits"] == 0 and result["pinsLeft"] == 0
