"""`write_atomically`: the file is the new bytes whole, or the old ones untouched, and no temporary
file is left either way (checkpoints, the int8 MiniLM and report plots are written through it)."""

import pytest

from annotation.services.runtime.files import write_atomically


def test_the_file_holds_the_new_bytes_and_no_temporary_is_left(tmp_path):
    path = tmp_path / "plot.png"
    write_atomically(path, b"old")
    write_atomically(path, b"new", durable=True)
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "model.ckpt"
    path.write_bytes(b"old")
    with pytest.raises(TypeError):
        write_atomically(path, "text, not bytes")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.ckpt"]
