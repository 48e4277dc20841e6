"""ROUTE rules: can a model, and tool search, tell tools, servers and agents apart?

One module per rule (or per small group of rules sharing one check), named after it; listed in
quiver/findings/catalog.py. Nothing here registers itself on import."""
