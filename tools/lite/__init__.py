"""The JupyterLite build of tools/build_lite.py, by job (see that script's docstring)."""
