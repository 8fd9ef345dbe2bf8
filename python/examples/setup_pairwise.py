"""Builds pairwise.pyx and arrays.pyx against the installed kiln: python setup_pairwise.py build_ext --inplace"""
from Cython.Build import cythonize
from setuptools import Extension, setup

import kiln

exts = [Extension(name, [name + ".pyx"], include_dirs=[kiln.get_include()],
                  library_dirs=[kiln.get_library_dir()], libraries=["kiln"],
                  runtime_library_dirs=[kiln.get_library_dir()])
        for name in ("pairwise", "arrays")]
setup(name="kiln-cython-examples", ext_modules=cythonize(exts, quiet=True))
