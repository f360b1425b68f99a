"""Shared test set-up: the oracle module on the path, and GPU/tool gating."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

IN_CI = os.environ.get("CI", "").lower() == "true"
