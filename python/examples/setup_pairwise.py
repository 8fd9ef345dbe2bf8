"""Builds pairwise.pyx against the installed kiln: python setup_pairwise.py build_ext --inplace"""
from Cython.Build import cythonize
from setuptools import Extension, setup

import kiln

ext = Extension("pairwise", ["pairwise.pyx"], include_dirs=[kiln.get_include()],
                library_dirs=[kiln.get_library_dir()], libraries=["kiln"],
                runtime_library_dirs=[kiln.get_library_dir()])
setup(name="pairwise", ext_modules=cythonize([ext], quiet=True))
