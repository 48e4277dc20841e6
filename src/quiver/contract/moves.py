"""Moves: a tool one server stopped serving and another server of the same catalog started to serve.

Renames within a server are paired first (as `diff_catalogs` pairs them) and are not moves. The tools left
over are paired across servers by the same normalised name, when there is one candidate each way: the same
tool at another address. Two different tools of two servers are no move however similar (a server split
into look-alike tools would otherwise pair at random). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from quiver.contract.diff import match_renames, normalise_name
from quiver.model import JSON

Catalogs = Mapping[str, Mapping[str, Mapping[str, JSON]]]
Address = tuple[str, str]  # (server, tool)


def match_moves(old: Catalogs, new: Catalogs) -> dict[Address, Address]:
    """{(old server, tool): (new server, tool)} for each tool that moved between servers."""
    removed: dict[Address, Mapping[str, JSON]] = {}
    added: dict[Address, Mapping[str, JSON]] = {}
    for server in sorted(set(old) | set(new)):
        before, after = old.get(server, {}), new.get(server, {})
        gone = {n: t for n, t in before.items() if n not in after}
        came = {n: t for n, t in after.items() if n not in before}
        renames = match_renames(gone, came)
        removed.update({(server, n): t for n, t in gone.items() if n not in renames})
        added.update({(server, n): t for n, t in came.items() if n not in renames.values()})
    if not removed or not added:
        return {}
    pairs: dict[Address, Address] = {}
    by_name: dict[str, list[Address]] = {}
    for address in added:
        by_name.setdefault(normalise_name(address[1]), []).append(address)
    taken: set[Address] = set()
    for address in sorted(removed):
        same = [a for a in by_name.get(normalise_name(address[1]), []) if a[0] != address[0]]
        rivals = [r for r in removed if normalise_name(r[1]) == normalise_name(address[1])]
        if len(same) == 1 and len(rivals) == 1 and same[0] not in taken:
            pairs[address] = same[0]
            taken.add(same[0])
    return pairs
