"""What a rebuild will do to users' collections, before anyone imports it: ``deckgen plan`` and ``build --check``.

Both work the build out in memory (:func:`deckgen.pipeline.prepare_build`) and
compare it with the lock file and the deck on disk; neither writes anything.
The import advice follows Anki's rules (``docs/anki-import.md``): notes match
by GUID, update only when strictly newer, an update replaces fields and tags,
nothing is deleted, and a note type that changed shape forks unless
*Merge note types* is ticked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..deck.describe import count_lines, describe_difference, describe_note
from ..deck.lock import Change, LockedNote
from ..deck.notetypes import CLOZE_MODEL_ID, CLOZE_MODEL_NAME, QA_MODEL_NAME
from ..deck.package import OBSOLETE_TAG, apkg_bytes
from ..options import DEFAULT_OUTPUT, DEFAULT_SOURCES, BuildOptions
from ..pipeline import PreparedBuild, prepare_build


@dataclass(frozen=True)
class PlanReport:
    """A build compared with the lock file: note counts as Anki's import log will show them."""

    output: Path
    lock: Path
    version_before: int
    version_after: int
    new: tuple[str, ...]
    changed: tuple[str, ...]
    unchanged: tuple[str, ...]
    obsolete: tuple[str, ...]
    """Notes shipped as obsolete in this build (newly removed ones first)."""
    newly_obsolete: int
    pruned: tuple[str, ...]
    rekeyed: int
    advice: tuple[str, ...]
    warnings: tuple[str, ...] = ()

    @property
    def updated(self) -> int:
        """Notes Anki will report as updated: changed ones and newly obsolete ones."""
        return len(self.changed) + self.newly_obsolete

    def lines(self) -> list[str]:
        """The report as printed by ``deckgen plan``."""
        if self.version_before == 0:
            head = f"Plan for {self.output}: first build (no lock file at {self.lock})"
        elif self.version_after == self.version_before:
            head = f"Plan for {self.output}: no change, deck version {self.version_after}"
        else:
            head = f"Plan for {self.output}: deck version {self.version_before} → {self.version_after} ({self.lock})"
        out = [head]
        rows = (("new", self.new), ("changed", self.changed), ("unchanged", self.unchanged),
                ("obsolete", self.obsolete), ("pruned", self.pruned))
        for label, items in rows:
            out.extend(count_lines(label, items))
        if self.rekeyed:
            out.append(f"  ({self.rekeyed} card(s) kept their identity although their wording moved)")
        out.append("Import advice:")
        out.extend(f"  - {line}" for line in self.advice)
        return out


@dataclass(frozen=True)
class CheckReport:
    """``build --check``: is the deck (and its lock file) on disk what a build would write now?"""

    output: Path
    up_to_date: bool
    differences: tuple[str, ...]
    version: int


def plan_deck(sources: Sequence[Path] = DEFAULT_SOURCES, output: Path = DEFAULT_OUTPUT,
              options: BuildOptions = BuildOptions()) -> PlanReport:
    """Compare what ``build`` would write to *output* with its lock file; write nothing."""
    return _plan(prepare_build(sources, output, options))


def check_deck(sources: Sequence[Path] = DEFAULT_SOURCES, output: Path = DEFAULT_OUTPUT,
               options: BuildOptions = BuildOptions()) -> CheckReport:
    """Whether *output* and its lock file are exactly what a build would write (for CI); write nothing.

    The *options*' timestamp plays no part: an up-to-date deck needs no new date.
    """
    prepared = prepare_build(sources, output, options)
    update, differences = prepared.update, []
    if not update.noop:
        plan = _plan(prepared)
        what = ", ".join(f"{n} {label}" for n, label in (
            (len(plan.new), "new"), (len(plan.changed), "changed"), (plan.newly_obsolete, "removed"),
            (len(plan.pruned), "pruned")) if n)
        differences.append(f"{prepared.lock_path}: a build would make deck version {update.lock.version} "
                           f"({what or 'note types changed'}); run deckgen build (deckgen plan shows the details)")
    elif _read(prepared.lock_path) != update.lock.to_text().encode("utf-8"):
        differences.append(f"{prepared.lock_path}: differs from what a build writes; run deckgen build")
    deck = _read(prepared.output)
    if deck is None:
        differences.append(f"{prepared.output}: missing; run deckgen build")
    elif deck != apkg_bytes(prepared.plan):
        differences.append(f"{prepared.output}: differs from a fresh build of the seeds and lock file; run deckgen build")
    return CheckReport(prepared.output, not differences, tuple(differences), update.lock.version)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _plan(prepared: PreparedBuild) -> PlanReport:
    u = prepared.update
    obsolete = [*u.obsolete, *u.still_obsolete]
    return PlanReport(
        output=prepared.output,
        lock=prepared.lock_path,
        version_before=u.old.version,
        version_after=u.lock.version,
        new=tuple(_describe(n) for n in u.new),
        changed=tuple(_describe_change(c) for c in u.changed),
        unchanged=tuple(_describe(n) for n in u.unchanged),
        obsolete=tuple(_describe(n) for n in obsolete),
        newly_obsolete=len(u.obsolete),
        pruned=tuple(_describe(n) for n in u.pruned),
        rekeyed=len(u.rekeyed),
        advice=tuple(_advice(prepared)),
        warnings=prepared.corpus.warnings,
    )


def _advice(prepared: PreparedBuild) -> list[str]:
    u = prepared.update
    names = {CLOZE_MODEL_ID: CLOZE_MODEL_NAME}
    if u.first_build:
        return ["First build: import with Anki's default options (File → Import). "
                f"Commit {prepared.lock_path.name} with the seeds: later builds need it to update collections safely."]
    if u.reshaped:
        types = ", ".join(names.get(mid, QA_MODEL_NAME) for mid in u.reshaped)
        return [f"The note type changed shape ({types}: fields or templates added, removed or reordered). "
                "In Anki's import dialog tick 'Merge note types' and import; then import the same file again with "
                "'Update notes: Always'. Anki re-dates the merged notes, so the first import cannot update them; "
                "the second replaces their fields and tags (your own edits to deckgen notes are lost; reviews stay)."]
    if u.noop:
        return [f"Nothing changed since deck version {u.old.version}: importing this deck again changes nothing."]
    advice = ["Default import options are fine (Update notes: If newer). Your reviews and scheduling are never touched."]
    if u.unchanged:
        advice.append(f"{len(u.unchanged)} unchanged note(s) import as duplicates: your edits and tags on them stay.")
    if u.changed:
        advice.append(f"{len(u.changed)} note(s) update in place: their fields and tags are replaced, "
                      "so a tag or edit you made on those notes is lost.")
    if u.obsolete or u.still_obsolete:
        advice.append(f"{len(u.obsolete) + len(u.still_obsolete)} note(s) lost their source and are shipped as obsolete: "
                      f"after importing, search tag:{OBSOLETE_TAG} in the browser to delete or suspend them.")
    if u.pruned:
        advice.append(f"{len(u.pruned)} obsolete note(s) left the deck. Anki deletes nothing: copies already in "
                      f"collections stay, tagged {OBSOLETE_TAG}.")
    if u.notetypes_changed:
        advice.append("Card templates or styling changed; they arrive with the default 'Update note types: If newer'.")
    return advice


def _describe(note: LockedNote) -> str:
    return describe_note(note.model, note.fields)


def _describe_change(change: Change) -> str:
    if change.before.obsolete:
        return f"{_describe(change.after)} (its source is back)"
    return describe_difference(change.after.model, change.before.fields, change.after.fields, (), change.after.tags)
