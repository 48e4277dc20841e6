"""The capability labels and a tool's classification: each label with the reason that set it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Label = Literal["untrusted_input", "private_data", "exfiltration", "destructive"]
LABELS: tuple[Label, ...] = ("untrusted_input", "private_data", "exfiltration", "destructive")
FLOW_LABELS: tuple[Label, ...] = ("untrusted_input", "private_data", "exfiltration")  # the lethal trifecta
# How a label reads in a sentence ("an untrusted-input tool", "the exfiltration tools").
SHOWN: dict[Label, str] = {
    "untrusted_input": "untrusted input",
    "private_data": "private data",
    "exfiltration": "exfiltration",
    "destructive": "destructive",
}
Origin = Literal["annotations", "side effect", "parameters", "description", "name", "built-in", "override"]


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a label is set (or, for an override that clears it, why it is not)."""

    label: Label
    text: str
    origin: str  # an `Origin`


@dataclass(frozen=True, slots=True)
class Capabilities:
    """One tool's labels, each with the reason that set it, in LABELS order; `cleared` are labels the
    classifier set and an override removed (the override is the reason)."""

    reasons: tuple[Reason, ...] = ()
    cleared: tuple[Reason, ...] = ()
    label_set: frozenset[str] = field(init=False, repr=False, compare=False)  # `has` is asked per carried tool
    # the labels in LABELS order: read per carried tool and agent (256,603 times in a 1,000-agent compile)
    labels: tuple[Label, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        labels = tuple(r.label for r in self.reasons)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "label_set", frozenset(labels))

    def has(self, label: Label) -> bool:
        return label in self.label_set

    def reason(self, label: Label) -> Reason | None:
        return next((r for r in self.reasons if r.label == label), None)

    def with_reasons(self, reasons: dict[Label, Reason], cleared: dict[Label, Reason]) -> Capabilities:
        ordered = tuple(reasons[label] for label in LABELS if label in reasons)
        return Capabilities(ordered, tuple(cleared[label] for label in LABELS if label in cleared))
