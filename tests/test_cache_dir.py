"""The compile cache folder's rules (readalign.kernels.cache_dir): READALIGN_CACHE_DIR, then
NUMBA_CACHE_DIR, then the sources' __pycache__, then a folder of the user's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_SECONDS, REPO
from readalign.kernels.cache_dir import CacheDir, resolve, user_cache_dir, writable


def _never() -> bool:
    raise AssertionError("the install's folders were looked at although a variable decides")


def test_readalign_variable_wins_over_numbas(tmp_path):
    env = {"READALIGN_CACHE_DIR": str(tmp_path / "ra"), "NUMBA_CACHE_DIR": str(tmp_path / "nb")}
    assert resolve(env, _never) == CacheDir(str(tmp_path / "ra"), "READALIGN_CACHE_DIR")


def test_numba_variable_applies_without_readaligns(tmp_path):
    env = {"READALIGN_CACHE_DIR": "", "NUMBA_CACHE_DIR": str(tmp_path / "nb")}
    assert resolve(env, _never) == CacheDir(str(tmp_path / "nb"), "NUMBA_CACHE_DIR")


def test_a_relative_folder_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve({"READALIGN_CACHE_DIR": "cache"}, _never).path == str(tmp_path / "cache")


def test_writable_sources_keep_numbas_pycache():
    assert resolve({}, lambda: True) == CacheDir(None, "sources")


@pytest.mark.parametrize(("env", "expected"), [
    ({"XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/readalign"),
    ({"HOME": "/home/u"}, "/home/u/.cache/readalign"),
])
def test_read_only_sources_fall_back_to_the_users_folder(env, expected, monkeypatch):
    monkeypatch.setenv("HOME", env["HOME"])
    assert resolve(env, lambda: False) == CacheDir(expected, "user")
    assert user_cache_dir(env) == expected


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_not_writable(tmp_path):
    (tmp_path / "__pycache__").mkdir()
    assert writable(tmp_path)
    (tmp_path / "__pycache__").chmod(0o555)
    try:
        assert not writable(tmp_path)
    finally:
        (tmp_path / "__pycache__").chmod(0o755)


# --- a read-only install and a cache folder built by another process ---------------------------

ALIGN = """
import json, pathlib, sys
import readalign
from readalign.kernels.compile_notice import compile_seconds
res = readalign.align(["ACGTTGCA", "GGGTTT"], ["TTACGTAGCATT", "AAGGGTTTAA"], backend="cpu")
print(json.dumps({"package": str(pathlib.Path(readalign.__file__).parent),
                  "distance": res.distance.tolist(), "ref_start": res.ref_start.tolist(),
                  "cigars": res.cigars(), "compiled": compile_seconds()}))
"""


def _read_only_copy(root: Path) -> Path:
    """readalign laid out as installed (its kernels inside it), with no compiled code, made
    read-only; returns the folder to put on PYTHONPATH."""
    site = root / "site"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "readalign", site / "readalign", ignore=ignore)
    shutil.copytree(REPO / "kernels", site / "readalign" / "kernels", ignore=ignore)
    for path in [site, *site.rglob("*")]:
        path.chmod(path.stat().st_mode & ~0o222)
    return site


def _align_in_new_process(site: Path, cache: Path, cwd: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "CI")}
    env.update(PYTHONPATH=str(site), READALIGN_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")
    res = subprocess.run([sys.executable, "-c", ALIGN], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=HANG_SECONDS)
    assert res.returncode == 0, res.stderr[-4000:]
    return json.loads(res.stdout)


@pytest.mark.slow
def test_a_second_process_loads_the_cache_the_first_built_with_the_package_read_only(tmp_path):
    site = _read_only_copy(tmp_path)
    try:
        first = _align_in_new_process(site, tmp_path / "cache", tmp_path)
        second = _align_in_new_process(site, tmp_path / "cache", tmp_path)
        assert first["package"] == second["package"] == str(site / "readalign")
        assert first["compiled"] > 0      # the cache folder started empty: the first compiled
        assert second["compiled"] == 0    # ...and the second loaded everything it ran
        assert first["distance"] == second["distance"] == [1, 0]
        assert first["ref_start"] == second["ref_start"] == [2, 2]
        assert first["cigars"] == second["cigars"] == ["8M", "6M"]
        assert any((tmp_path / "cache").rglob("*.nbi"))
        assert not [p for p in site.rglob("*") if p.suffix in (".nbi", ".nbc", ".pyc")]
    finally:
        for path in [site, *site.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)  # so that pytest can remove tmp_path
