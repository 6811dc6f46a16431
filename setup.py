"""Build hook for the optional compiled masking core (everything else is in pyproject.toml).

`piilab._fastmask` computes exactly what the Python code of `piilab.tokenization`
computes, several times faster. It is optional: where no C compiler is available
the build skips it with a warning and `mask_text` runs the pure-Python code.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("piilab._fastmask", ["piilab/_fastmask.c"], optional=True),
    ],
)
