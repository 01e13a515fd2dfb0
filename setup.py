"""Builds jitc._jitc, the compiled half of the Python package.

The extension links the library's static archive (build/pylib/libjitc.a,
made here with the project's Makefile: its objects are built with -fPIC,
and the archive exports only the functions of jitc.h, so that nothing of
jitc's internals meets another extension's names).  One shared object then
holds the whole compiler: no libjitc.so to find at run time.  The cpu
target's LLVM is linked as the Makefile links it (the system's shared
libLLVM); a machine without LLVM builds the library without the cpu target,
and the package works there on interp and cuda.
"""
import os
import re
import subprocess

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# JITC_BUILD names a build directory of the Makefile to link (the tests
# link the library they test); make brings it up to date either way.
LIB = os.environ.get("JITC_BUILD") or os.path.join("build", "pylib")


class BuildWithLibrary(build_ext):
    def run(self):
        jobs = str(min(os.cpu_count() or 1, 16))
        subprocess.check_call(["make", "-j" + jobs, "BUILD=" + LIB,
                               LIB + "/libjitc.a", LIB + "/jitc.pc"], cwd=ROOT)
        # jitc.pc's Libs.private: what the library needs (LLVM, -ldl, -lm).
        pc = open(os.path.join(ROOT, LIB, "jitc.pc")).read()
        private = re.search(r"^Libs.private:(.*)$", pc, re.M).group(1).split()
        for ext in self.extensions:
            ext.extra_objects = [os.path.join(ROOT, LIB, "libjitc.a")]
            # A newer archive relinks the extension, as a changed source does.
            ext.depends = ext.depends + ext.extra_objects
            # The archive's jitc_* functions stay inside the extension.
            ext.extra_link_args = ["-Wl,--exclude-libs,ALL"] + private
        super().run()


setup(
    ext_modules=[Extension(
        "jitc._jitc",
        sources=["python/jitc/" + f for f in ("_jitc.c", "state.c", "values.c", "run.c", "device.c",
                                                  "kernel.c", "names.c", "last.c", "evaluate.c",
                                                  "reeval.c", "pinned.c")],
        include_dirs=["src", numpy.get_include()],
        # Only PyInit__jitc is exported (PyMODINIT_FUNC marks it).
        extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden"],
        depends=["src/jitc.h", "python/jitc/pyjitc.h"],
    )],
    cmdclass={"build_ext": BuildWithLibrary},
)
