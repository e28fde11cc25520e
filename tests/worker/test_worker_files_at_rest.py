"""Data at rest on the engine's side: the vLLM key file and the llama.cpp worker's KV cache files
are 0600 in 0700 folders whatever the umask."""
from __future__ import annotations

import os

import pytest

from app.worker.engines.vllm import install_key
from app.worker.llama.kv_store import KvStore
from tests.support.private_files import loose, mode


@pytest.fixture
def umask_022():
    old = os.umask(0o022)                     # the usual default: files 0644, folders 0755
    yield
    os.umask(old)


def test_vllm_key_file_kept_0600_when_it_existed_looser(pagewise_home, umask_022):
    from app.core import paths
    key = install_key()
    path = paths.config_dir() / "vllm-api-key"
    assert mode(path) == 0o600
    os.chmod(path, 0o644)                    # an earlier version's file
    assert install_key() == key and mode(path) == 0o600


def test_kv_cache_files_are_0600_in_0700_folders(tmp_path, umask_022):
    class ByteStore(KvStore):                # the store's own file handling, a stand-in state
        @staticmethod
        def _write_state(ctx, path, toks):
            from app.worker.llama.kv_store import _create_private
            with _create_private(path) as f:
                f.write(b"k" * 100)
            return True

    root = tmp_path / "kv"
    root.mkdir(mode=0o755)
    store = ByteStore(root, "model-key", min_tokens=1)
    store.save(None, list(range(20)))
    assert loose(root) == []

    # the real state writer (mmap + fallocate) with a real llama.cpp context
    from tests.support.llama_inproc import new_llama
    from app.core.models.catalogue import load_catalogue, local_path
    llm = new_llama(local_path(load_catalogue().default), n_ctx=256)
    tokens = llm.tokenize(b"The quick brown fox jumps over the lazy dog.", add_bos=True)
    llm.eval(tokens)
    real = KvStore(root, "real", min_tokens=1)
    real.save(llm._ctx.ctx, tokens)
    assert sorted(p.suffix for p in real.dir.iterdir()) == [".kv", ".tok"]
    assert loose(root) == []

