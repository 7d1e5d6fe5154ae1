"""What a push sends, decided from the deck and what the collection holds (no Anki needed: the decision is pure)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from deckgen.deck.collection import NoteRow
from deckgen.deck.lock import Lock, NoteTypeState
from deckgen.deck.notetypes import QA_MODEL_ID, qa_model
from deckgen.deck.package import OBSOLETE_TAG
from deckgen.errors import DeckgenError
from deckgen.push.changes import deck_notetypes, plan_push
from deckgen.push.state import AnkiNote, CollectionState, NoteType

MODEL = qa_model()
OURS = ("deckgen", "kind::why", "repo::o::r", "topic::a")
FIELDS = ("问题", "答案", "cue", "summary", "sentence", 'o/r · <span class="where">a.txt:3</span>', "精读", "")
CHANGED = 1_700_000_500
NOTETYPES = deck_notetypes(Lock(notetypes={QA_MODEL_ID: NoteTypeState("h", "s", 1_700_000_000)}))


def row(guid: str = "g1", *, fields: tuple[str, ...] = FIELDS, tags: tuple[str, ...] = OURS, mod: int = CHANGED) -> NoteRow:
    return NoteRow(MODEL, fields, tags, guid, 0, mod, 1_700_000_000_000)


def held(guid: str = "g1", *, fields: tuple[str, ...] = FIELDS, tags: tuple[str, ...] = OURS, mod: int = CHANGED,
         model: int = QA_MODEL_ID) -> AnkiNote:
    return AnkiNote(42, guid, model, mod, tags, fields, (4200, 4201))


def state(*notes: AnkiNote, notetypes: dict[int, NoteType] | None = None) -> CollectionState:
    return CollectionState({n.guid: n for n in notes}, notetypes or {})


def test_a_note_the_collection_lacks_is_new_and_one_it_holds_as_is_is_left_alone() -> None:
    plan = plan_push([row("g1"), row("g2")], state(held("g2")), NOTETYPES)
    assert [p.row.guid for p in plan.new] == ["g1"] and plan.unchanged == 1 and not plan.updated


def test_where_in_the_seeds_is_no_change() -> None:
    """The seed file and line move without re-dating the note (README, 'Identity'): not an edit, not a change."""
    moved = FIELDS[:5] + ('o/r · <span class="where">b.txt:90</span>',) + FIELDS[6:]
    plan = plan_push([row(fields=moved)], state(held(mod=1)), NOTETYPES)
    assert plan.unchanged == 1 and not plan.updated and not plan.edited


def test_an_older_copy_is_updated_keeping_the_learners_tags_and_replacing_deckgens() -> None:
    reworded = ("问题", "新答案", *FIELDS[2:])
    learner = ("my::keep", "marked", "Leech")
    before = held(tags=(*OURS, "topic::gone", *learner), mod=CHANGED - 1)
    plan = plan_push([row(fields=reworded, tags=(*OURS, "topic::new"))], state(before), NOTETYPES)
    assert [p.row.guid for p in plan.updated] == ["g1"]
    assert plan.updated[0].kept_tags == learner
    assert "答案 → 新答案" in plan.updated[0].describe()


def test_a_copy_edited_in_anki_after_the_deck_changed_it_stays() -> None:
    """As an import decides "If newer": the learner's edit is newer than the deck's change."""
    edited = ("问题", "我的答案", *FIELDS[2:])
    plan = plan_push([row()], state(held(fields=edited, mod=CHANGED + 60)), NOTETYPES)
    assert not plan.updated and [p.row.guid for p in plan.edited] == ["g1"]


def test_deckgen_tags_compare_without_case_and_the_learners_tags_are_no_change() -> None:
    plan = plan_push([row()], state(held(tags=("DECKGEN", "Kind::Why", "repo::o::r", "topic::a", "mine"), mod=1)),
                     NOTETYPES)
    assert plan.unchanged == 1 and not plan.updated


@pytest.mark.parametrize("delete", [False, True])
def test_obsolete_notes_are_suspended_or_deleted_and_never_brought_back(delete: bool) -> None:
    gone = (*OURS, OBSOLETE_TAG)
    plan = plan_push([row("g1", tags=gone), row("g2", tags=gone)], state(held("g1", mod=1)), NOTETYPES,
                     delete_obsolete=delete)
    assert not plan.new  # g2 is not in the collection and stays out
    assert [n.guid for n in plan.obsolete] == ["g1"] and plan.delete is delete
    assert not plan.updated and not plan.unchanged  # obsolete notes are counted as such
    assert [p.row.guid for p in plan.retired] == ([] if delete else ["g1"])  # the banner and tag, unless deleted


def test_an_obsolete_note_edited_since_gets_its_tag_by_itself() -> None:
    plan = plan_push([row(tags=(*OURS, OBSOLETE_TAG))], state(held(fields=("改过", *FIELDS[1:]), mod=CHANGED + 1)),
                     NOTETYPES)
    assert plan.to_tag == (42,) and not plan.retired


def test_a_note_type_with_other_fields_stops_the_push() -> None:
    ours = NOTETYPES[0]
    theirs = NoteType(QA_MODEL_ID, "deckgen Q/A", (*ours.fields, "Extra"), ours.templates, ours.css, 0)
    with pytest.raises(DeckgenError, match=r"^the note type 'deckgen Q/A' in Anki has fields .*, Extra; this deck's"):
        plan_push([row()], state(notetypes={QA_MODEL_ID: theirs}), NOTETYPES)


def test_a_note_of_another_note_type_stops_the_push() -> None:
    with pytest.raises(DeckgenError, match="1 note\\(s\\) of this deck are of another note type in Anki"):
        plan_push([row()], state(held(model=123)), NOTETYPES)


def test_older_templates_are_updated_under_the_name_the_learner_gave_them() -> None:
    ours = NOTETYPES[0]
    theirs = NoteType(QA_MODEL_ID, "我的问答", ours.fields, ours.templates, "old css", ours.mod - 1)
    plan = plan_push([], state(notetypes={QA_MODEL_ID: theirs}), NOTETYPES)
    assert [(t.id, t.name, t.css) for t in plan.notetypes] == [(QA_MODEL_ID, "我的问答", ours.css)]
    newer = replace(theirs, mod=ours.mod + 1)  # restyled in Anki after deckgen last changed it: left alone
    assert not plan_push([], state(notetypes={QA_MODEL_ID: newer}), NOTETYPES).notetypes
