"""AGT rules: custom agent files (frontmatter, tools, links between agents, unresolved tool references).

One module per rule (or per small group of rules sharing one check), named after it; listed in
quiver/findings/catalog.py. Nothing here registers itself on import."""
