"""The part-of-speech table: every word's tag as jieba's dictionary has it, from the dictionary or the kept file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from deckgen.text.postags import TagTable, load_tags, parse_tags
from deckgen.text.segment import get_segmenter

# Words of one or more characters from a few scripts (astral ones too: they widen the joined string).
WORDS = st.text(alphabet=st.sampled_from("的测试缓存a b_zé𠀀龘"), min_size=1, max_size=6)
TAGS = st.sampled_from(["n", "v", "vn", "nz", "x"])


@given(st.dictionaries(WORDS, TAGS, max_size=40), st.lists(WORDS, max_size=20))
def test_every_word_has_its_tag_and_no_other_word_has_one(pairs: dict[str, str], others: list[str]) -> None:
    table = TagTable.from_pairs(pairs)
    kept = TagTable.from_bytes(table.to_bytes())
    assert kept is not None and len(kept) == len(table) == len(pairs)
    for word in [*pairs, *others, "", "\uffff" * 3]:
        assert table.get(word) == kept.get(word) == pairs.get(word, "")


def test_a_damaged_or_foreign_file_is_not_loaded() -> None:
    data = TagTable.from_pairs({"缓存": "n", "测试": "vn"}).to_bytes()
    flipped = bytearray(data)
    flipped[-1] ^= 1
    assert TagTable.from_bytes(bytes(flipped)) is None
    assert TagTable.from_bytes(data.replace(b"postags", b"postagz", 1)) is None
    assert TagTable.from_bytes(data[:-3]) is None


def test_the_table_of_jiebas_dictionary_is_the_same_built_or_read_back(tmp_path: Path) -> None:
    tokenizer = get_segmenter()._tk
    with tokenizer.get_dict_file() as f:
        pairs = parse_tags(f)
    built = load_tags(tokenizer, tmp_path)
    assert list(tmp_path.iterdir())  # kept for the next process
    read_back = load_tags(tokenizer, tmp_path)
    sample = list(pairs)[::997]
    assert len(read_back) == len(built) == len(pairs)
    assert [read_back.get(w) for w in sample] == [built.get(w) for w in sample] == [pairs[w] for w in sample]
