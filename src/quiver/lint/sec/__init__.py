"""SEC rules: hostile text in tool, server and agent texts; tool names that pose as others.

One module per rule (or per small group of rules sharing one check), named after it; listed in
quiver/findings/catalog.py. Nothing here registers itself on import."""
