"""The module's allocator: jemalloc, two arenas, as the `dar`
binary's (freed page buffers reused, not faulted in again)."""

import os
import subprocess
import sys

import pytest

from conftest import SAMPLE


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="jemalloc is the module's allocator on Linux")
def test_the_module_allocates_with_jemalloc_and_two_arenas():
    # jemalloc prints its statistics, options included, at exit when asked
    # through its (prefixed) environment variable; glibc's malloc ignores it.
    code = f"import dar; print(dar.Table({str(SAMPLE)!r}).scan().count())"
    env = dict(os.environ, _RJEM_MALLOC_CONF="stats_print:true")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.strip()) > 0
    assert "opt.narenas: 2\n" in out.stderr, out.stderr[:2000]
    assert 'opt.thp: "always"\n' in out.stderr, out.stderr[:2000]
