"""The guard on the repository root (``tests/conftest.py``) sees what a test leaves there."""
from __future__ import annotations

from tests.support.repository import listing_change, root_listing


def test_a_file_left_at_the_root_is_a_change(tmp_path):
    (tmp_path / 'README.md').write_text('x')
    before = root_listing(tmp_path)
    (tmp_path / '<BrokenSource object at 0x7f4b822ad610>').write_text('')
    change = listing_change(before, root_listing(tmp_path))
    assert change == "added '<BrokenSource object at 0x7f4b822ad610>'"


def test_a_removed_file_is_a_change(tmp_path):
    (tmp_path / 'setup.cfg').write_text('x')
    before = root_listing(tmp_path)
    (tmp_path / 'setup.cfg').unlink()
    assert listing_change(before, root_listing(tmp_path)) == "removed 'setup.cfg'"


def test_caches_the_virtualenv_and_data_directories_are_not_a_change(tmp_path):
    before = root_listing(tmp_path)
    for name in ('.pytest_cache', '__pycache__', 'hub-data', 'hub-demo', '.venv',
                 'sdlc_hub.egg-info'):
        (tmp_path / name).mkdir()
    assert listing_change(before, root_listing(tmp_path)) is None
