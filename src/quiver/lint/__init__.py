"""`quiver lint`: rule modules in one package per code prefix (agt/, mcp/, tool/, sec/, bud/, route/, qvr/),
shared helpers in support/, the context and check runner in engine.py, the run in run.py."""
