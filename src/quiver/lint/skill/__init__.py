"""SKILL rules: Agent Skills (`SKILL.md`): their frontmatter, the names one listing holds twice, and the
`skills:` entries of agents that name no skill they see.

One module per rule (or per small group of rules sharing one check), named after it; listed in
quiver/findings/catalog.py. Nothing here registers itself on import."""
