"""The compile cache folder's rules (readalign.runtime.cache_dir): READALIGN_CACHE_DIR, then
NUMBA_CACHE_DIR, then the sources' __pycache__, then a folder of the user's own."""

from __future__ import annotations

import os

import pytest

from readalign.runtime.cache_dir import CacheDir, resolve, user_cache_dir, writable


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
