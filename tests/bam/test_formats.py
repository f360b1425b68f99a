"""The output's format from ``--output-format``/``--sam`` and the file name: one rule."""

from __future__ import annotations

import pytest

from readalign.bam.formats import index_suffix, output_format
from readalign.errors import InputError


@pytest.mark.parametrize(("path", "asked", "want"), [
    ("x.bam", None, "bam"), ("x.sam", None, "sam"), ("x.cram", None, "cram"),
    ("X.SAM", None, "sam"), ("dir.sam/x", None, "bam"), ("x", None, "bam"), ("-", None, "bam"),
    ("/dev/stdout", None, "bam"), ("x.out", "sam", "sam"), ("-", "sam", "sam"),
    ("x.sam", "sam", "sam"), ("-", "cram", "cram"),
])
def test_format_from_the_option_else_the_name(path, asked, want):
    assert output_format(path, asked) == want


@pytest.mark.parametrize(("path", "asked", "option"), [
    ("x.bam", "sam", "--sam"), ("x.sam", "bam", "--output-format"),
    ("x.cram", "bam", "--output-format"), ("x.BAM", "cram", "--output-format"),
])
def test_an_option_the_name_contradicts_is_refused(path, asked, option):
    with pytest.raises(InputError, match=rf"^{path}: {option} asks for {asked.upper()} but the "
                                         "name ends in"):
        output_format(path, asked, option)


def test_index_follows_the_format():
    assert [index_suffix(f, True) for f in ("bam", "sam", "cram")] == [".bai", None, ".crai"]
    assert index_suffix("bam", False) is None
