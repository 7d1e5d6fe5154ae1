"""jieba's prefix dictionary as deckgen keeps it: jieba's own dict, read back whole or not at all."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from deckgen.text.prefixdict import from_bytes, load_prefix_dict, to_bytes
from deckgen.text.segment import _import_jieba

KEYS = st.text(alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), min_size=1, max_size=8)


@given(st.dictionaries(KEYS, st.integers(0, 2**63 - 1), min_size=1, max_size=40), st.integers(0, 2**40))
def test_a_kept_dictionary_reads_back_as_it_was(freq: dict[str, int], total: int) -> None:
    data = to_bytes(freq, total)
    assert data is not None
    assert from_bytes(data) == (freq, total)


def test_a_damaged_or_foreign_file_is_not_loaded() -> None:
    data = to_bytes({"缓存": 3, "缓": 0, "测试": 5}, 8)
    assert data is not None and from_bytes(data) is not None
    flipped = bytearray(data)
    flipped[-1] ^= 1
    assert from_bytes(bytes(flipped)) is None
    assert from_bytes(data.replace(b"prefixdict", b"prefixdicT", 1)) is None
    assert from_bytes(data[:-3]) is None


def test_a_key_holding_a_newline_is_not_kept() -> None:
    assert to_bytes({"a\nb": 1, "c": 2}, 3) is None


def test_the_kept_dictionary_is_jiebas_own_built_or_read_back(tmp_path: Path) -> None:
    tokenizer = _import_jieba().Tokenizer()
    freq, total = tokenizer.gen_pfdict(tokenizer.get_dict_file())
    assert load_prefix_dict(tokenizer, tmp_path) == (freq, total)
    assert [p.name.split(".")[0] for p in tmp_path.iterdir()] == ["deckgen-prefixdict"]  # kept for the next process
    assert load_prefix_dict(tokenizer, tmp_path) == (freq, total)
    assert load_prefix_dict(tokenizer, None) == (freq, total)  # no folder: built, nothing kept
    assert len(list(tmp_path.iterdir())) == 1
