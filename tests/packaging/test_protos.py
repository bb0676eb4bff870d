"""The committed *_pb2.py files are exactly what protoc generates from protos/."""

import subprocess
import sys

import pytest

from tests.helpers import ROOT


def test_generated_code_is_current(tmp_path):
    pytest.importorskip("grpc_tools")
    sources = sorted((ROOT / "protos").rglob("*.proto"))
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'protos'}",
                    f"--python_out={tmp_path}", *map(str, sources)], check=True)
    generated = sorted(tmp_path.rglob("*_pb2.py"))
    assert generated, "protoc generated nothing"
    for path in generated:
        committed = ROOT / path.relative_to(tmp_path)
        assert committed.exists(), f"{committed} is missing: run `make protos`"
        assert committed.read_text() == path.read_text(), \
            f"{committed} is stale: run `make protos` and commit the result"
    committed_files = sorted((ROOT / "dtfnb" / "protos").glob("*_pb2.py"))
    assert [p.name for p in committed_files] == [p.name for p in generated]
