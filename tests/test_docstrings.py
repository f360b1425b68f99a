"""The public API's docstrings are its reference: every example in them runs and gives what it
shows, and every public name documents its parameters, results, errors and an example."""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import readalign

MODULES = ["readalign", "readalign.api", "readalign.words.cdist", "readalign.engine.result",
           "readalign.engine.scoring", "readalign.errors", "readalign.dbsearch.api",
           "readalign.dbsearch.report"]

FUNCTIONS = {"align": ("Parameters", "Returns", "Raises", "Notes", "Examples"),
             "edit_distance": ("Parameters", "Returns", "Raises", "Notes", "Examples"),
             "cdist": ("Parameters", "Returns", "Raises", "Notes", "Examples"),
             "free_gpu_memory": ("Examples",),
             "Scoring": ("Parameters", "Attributes", "Raises", "Notes", "Examples"),
             "search": ("Parameters", "Returns", "Raises", "Notes", "Examples"),
             "SparseDistances": ("Attributes", "Examples"),
             "SearchHits": ("Attributes", "Examples"),
             "AlignResult": ("Attributes", "Examples"),
             "ReadalignError": ("Examples",), "InputError": ("Examples",),
             "BackendUnavailableError": ("Examples",), "GPUMemoryError": ("Examples",)}
"""Every public name and the numpy-style sections its docstring must hold."""


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run_and_show_what_they_give(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("name", sorted(set(readalign.__all__) - {"__version__"}))
def test_every_public_name_documents_its_sections(name):
    doc = inspect.getdoc(getattr(readalign, name)) or ""
    for section in FUNCTIONS[name]:
        assert f"\n{section}\n{'-' * len(section)}\n" in doc, (name, section)


@pytest.mark.parametrize("member", ["score", "query_start", "query_end", "cigar_array", "cigar",
                                    "cigars"])
def test_align_result_members_have_examples(member):
    doc = inspect.getdoc(getattr(readalign.AlignResult, member)) or ""
    assert "\nExamples\n--------\n>>> " in doc, member
