"""TOOL rules: tool definitions as servers serve them (the lock file).

One module per rule (or per small group of rules sharing one check), named after it; listed in
quiver/findings/catalog.py. Nothing here registers itself on import."""
