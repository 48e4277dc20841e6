"""Baselines: findings recorded once (by fingerprint) and hidden from later runs.

The file format is read and written by `quiver.sources.baseline`; this module only applies it.
Fingerprints (`Finding.fingerprint`, defined on the model) hash rule, file, agent, server, tool and the
message with numbers masked, so a finding keeps its fingerprint when lines move.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from quiver.model import Finding


def split_baselined(findings: Sequence[Finding], known: Collection[str]) -> tuple[list[Finding], int]:
    """(findings not in the baseline, number hidden by it)."""
    shown = [f for f in findings if f.fingerprint not in known]
    return shown, len(findings) - len(shown)
