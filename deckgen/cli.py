"""The command line: options, one library call, a summary line, errors mapped to exit codes.

Each command imports what it needs when it runs: ``deckgen --help`` and
``deckgen lint`` must not pay for genanki or jieba (see :mod:`deckgen.options`).
The only module that imports Click: the library reports progress through
:class:`deckgen.progress.Progress`, which :class:`ConsoleProgress` draws here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO, TypeVar

import click

from . import __version__
from .kinds import CardKind
from .options import (
    ANKICONNECT_KEY_ENV,
    DEFAULT_ANKICONNECT_URL,
    DEFAULT_DECK_NAME,
    DEFAULT_GRACE,
    DEFAULT_OUTPUT,
    DEFAULT_SOURCES,
    BuildOptions,
    PushOptions,
)

if TYPE_CHECKING:
    from .types import BuildReport

_SEEDS = click.argument("seeds", nargs=-1, type=click.Path(path_type=Path))
_GRACE = click.option("--grace", type=click.IntRange(min=0), default=DEFAULT_GRACE, show_default=True,
                      help="Deck versions that still ship a card whose source was removed (tagged deckgen::obsolete).")
_PRUNE = click.option("--prune", is_flag=True, help="Drop cards already shipped as obsolete from the deck and lock file now.")
_TAXONOMY = click.option("--taxonomy", type=click.Path(path_type=Path, dir_okay=False),
                         help="Topic taxonomy, over the built-in one (default: topics.toml beside the seeds, if any).")
_GLOSSARY = click.option("--glossary", type=click.Path(path_type=Path, dir_okay=False),
                         help="Glossary, over the built-in one (default: glossary.toml beside the seeds, if any).")
_OUTPUT = click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), default=DEFAULT_OUTPUT,
                       show_default=True, help="Where to write the .apkg deck.")
_DECK_NAME = click.option("--deck-name", default=DEFAULT_DECK_NAME, show_default=True,
                          help="Top-level Anki deck; each repository gets a subdeck.")
_NO_CACHE = click.option("--no-cache", "no_cache", is_flag=True,
                         help="Make every card afresh: neither read nor fill the per-user cache of cards (~/.cache/deckgen).")
_JOBS = click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
                     help="Make the cards of new or changed entries in N processes (for large corpora).")
_QUIET = click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
_VERBOSE = click.option("-v", "--verbose", is_flag=True, help="Also print how long each stage took (on stderr).")
_F = TypeVar("_F", bound=Callable[..., None])


def _deck_options(command: _F) -> _F:
    """The options of the deck a command writes, ``build``'s and ``push``'s alike (in --help's order)."""
    for option in reversed((_OUTPUT, _DECK_NAME, _GRACE, _PRUNE, _TAXONOMY, _GLOSSARY, _NO_CACHE, _JOBS)):
        command = option(command)
    return command


@contextmanager
def _user_errors() -> Iterator[None]:
    """A :class:`DeckgenError` becomes ``Error: …`` on stderr and exit code 1."""
    from .errors import DeckgenError, UnknownTopic  # a command's first step: --help loads neither

    try:
        yield
    except UnknownTopic as exc:
        raise click.BadParameter(str(exc), param_hint="'--topic'") from None
    except DeckgenError as exc:
        raise click.ClickException(str(exc)) from None


def _echo_warnings(warnings: tuple[str, ...]) -> None:
    for warning in warnings:
        click.echo(f"Warning: {warning}", err=True)


def main() -> None:
    """The ``deckgen`` command: :func:`cli`, ending the process without freeing what it made (see :mod:`deckgen.shutdown`).

    Ctrl-C, SIGTERM and a hangup stop it cleanly: no traceback, no Click ``Aborted!``, and the shell's status for
    the signal (130, 143, 129), after the build has stopped its workers and removed its temporary files.
    """
    from .shutdown import Interrupted, exit_now, exit_now_with, keep_until_exit, stop_on_signals

    keep_until_exit()
    stop_on_signals()
    try:
        cli()
    except SystemExit as end:  # how Click ends every command, with its exit code
        exit_now(end.code)
    except Interrupted as stop:
        exit_now_with(stop.status, str(stop))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="deckgen")
def cli() -> None:
    """Turn review summaries of pull requests into Anki decks of their design decisions."""


def _build_topics(sources: tuple[Path, ...], topics: tuple[str, ...], split: Path | None, output: Path,
                  full_deck: Path, options: BuildOptions, *, check: bool, quiet: bool) -> None:
    """``build --topic`` (one deck) or ``build --split-topics`` (a folder of decks and an index)."""
    ctx = click.get_current_context()
    if check or (split and (topics or ctx.get_parameter_source("output") == click.core.ParameterSource.COMMANDLINE)):
        raise click.UsageError("--split-topics writes its own files: use it without --topic, -o and --check; "
                               "--topic cannot be combined with --check")
    from .pipeline import build_topic_deck, build_topic_decks

    with _user_errors():
        if split:
            folder = build_topic_decks(sources, split, full_deck, options)
            decks = [d for d in folder.decks if d.path]
            warnings = folder.warnings
            summary = (f"Built {len(decks)} topic decks ({sum(d.cards for d in decks)} cards in all) "
                       f"from {folder.entries} PRs → {folder.index}")
        else:
            deck = build_topic_deck(sources, topics, output, full_deck, options)
            warnings = deck.warnings
            summary = f"Built {deck.entries} PRs, {deck.cards} cards from {deck.files} seed file(s) → {deck.output}"
    if not quiet:
        _echo_warnings(warnings)
        click.echo(summary)


@cli.command()
@_SEEDS
@_deck_options
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 and say what differs unless the deck and its lock file are up to date.")
@click.option("--topic", "topics", multiple=True, metavar="ID",
              help="Write a deck of these topics only (repeatable; see deckgen topics) to -o.")
@click.option("--split-topics", type=click.Path(path_type=Path, file_okay=False), metavar="DIR",
              help="Write one deck per topic to DIR, plus DIR/index.md.")
@click.option("--lock-of", "full_deck", type=click.Path(path_type=Path, dir_okay=False), default=DEFAULT_OUTPUT,
              show_default=True, help="With --topic/--split-topics: the full deck whose lock file gives the notes' identities.")
@_QUIET
@_VERBOSE
def build(seeds: tuple[Path, ...], output: Path, deck_name: str, grace: int, prune: bool, check: bool,
          topics: tuple[str, ...], split_topics: Path | None, full_deck: Path, taxonomy: Path | None,
          glossary: Path | None, no_cache: bool, jobs: int, quiet: bool, verbose: bool) -> None:
    """Build an Anki deck from seed files or folders (default: seeds/).

    The lock file beside the deck (decks/deckgen.lock.json) keeps every card's
    identity and dates across rebuilds; commit it with the seeds. Topic decks
    reuse the full deck's notes, so any mix of them imports without duplicates.

    \b
    Example:
        deckgen build                       # seeds/ → decks/deckgen.apkg
        deckgen build seeds/new.txt -o new.apkg
        deckgen build --check               # in CI: is decks/ up to date?
        deckgen build --topic cuda-graph -o cuda-graph.apkg
        deckgen build --split-topics decks/topics
    """
    sources = seeds or DEFAULT_SOURCES
    options = BuildOptions(deck_name=deck_name, grace=grace, prune=prune, taxonomy=taxonomy, glossary=glossary,
                           cache=not no_cache, jobs=jobs)
    if topics or split_topics:
        _build_topics(sources, topics, split_topics, output, full_deck, options, quiet=quiet, check=check)
        return
    from .pipeline import build_deck

    if check:
        from .report.plan import check_deck

        with _user_errors():
            result = check_deck(sources, output, options)
        for difference in result.differences:
            click.echo(f"Out of date: {difference}", err=True)
        if not result.up_to_date:
            click.get_current_context().exit(1)
        if not quiet:
            click.echo(f"Up to date: {result.output} (deck version {result.version})")
        return
    with _user_errors(), ConsoleProgress.for_stderr(quiet=quiet, verbose=verbose) as progress:
        report = build_deck(sources, output, options, progress=progress)
    if not quiet:
        _echo_built(report)


def _echo_built(report: BuildReport) -> None:
    """A build's warnings and summary: the deck written, and what changed in it since its lock file."""
    _echo_warnings(report.warnings)
    click.echo(f"Built {report.entries} PRs, {report.cards} cards from {report.files} seed file(s) → {report.output}")
    changes = report.changes
    if changes and not changes.first_build:
        click.echo(f"Deck version {changes.version}: {changes.new} new, {changes.changed} changed, "
                   f"{changes.unchanged} unchanged, {changes.obsolete} obsolete, {changes.pruned} pruned notes")


def _http_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise click.BadParameter(f"{value!r} is not an http:// or https:// address (AnkiConnect's is {DEFAULT_ANKICONNECT_URL})")
    return value


@cli.command()
@_SEEDS
@_deck_options
@click.option("--url", default=DEFAULT_ANKICONNECT_URL, show_default=True, callback=_http_url,
              help="Where AnkiConnect listens.")
@click.option("--api-key", envvar=ANKICONNECT_KEY_ENV, show_envvar=True,
              help="AnkiConnect's API key, when its config sets one.")
@click.option("--dry-run", is_flag=True, help="Print what would change in the collection; write nothing, send nothing.")
@click.option("--delete-obsolete", is_flag=True,
              help="Delete the notes whose source was removed, instead of tagging and suspending them.")
@_QUIET
@_VERBOSE
def push(seeds: tuple[Path, ...], output: Path, deck_name: str, grace: int, prune: bool, taxonomy: Path | None,
         glossary: Path | None, no_cache: bool, jobs: int, url: str, api_key: str | None, dry_run: bool,
         delete_obsolete: bool, quiet: bool, verbose: bool) -> None:
    """Build the deck (as build does) and put it into the running Anki, through the AnkiConnect add-on.

    New notes are added; changed ones are updated in place, keeping your tags, reviews and decks; notes
    whose source was removed are tagged deckgen::obsolete and suspended, or deleted.  Writes the same
    .apkg and lock file as build.  Anki must be running, with AnkiConnect (add-on 2055492159).

    \b
    Example:
        deckgen push                        # seeds/ → decks/deckgen.apkg → Anki
        deckgen push --dry-run              # what would change in Anki
    """
    from .pipeline import push_deck

    options = BuildOptions(deck_name=deck_name, grace=grace, prune=prune, taxonomy=taxonomy, glossary=glossary,
                           cache=not no_cache, jobs=jobs)
    target = PushOptions(url=url, api_key=api_key, dry_run=dry_run, delete_obsolete=delete_obsolete)
    with _user_errors(), ConsoleProgress.for_stderr(quiet=quiet, verbose=verbose) as progress:
        report = push_deck(seeds or DEFAULT_SOURCES, output, options, target, progress=progress)
    if dry_run:
        _echo_warnings(report.build.warnings)
        click.echo("\n".join(report.plan.lines(report.url)))
    elif not quiet:
        _echo_built(report.build)
        click.echo(report.summary())


@cli.command()
@_SEEDS
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), default=DEFAULT_OUTPUT,
              show_default=True, help="The deck to compare with (its lock file sits beside it).")
@click.option("--deck-name", default=DEFAULT_DECK_NAME, show_default=True, help="Top-level Anki deck.")
@_GRACE
@_PRUNE
@_TAXONOMY
@_GLOSSARY
def plan(seeds: tuple[Path, ...], output: Path, deck_name: str, grace: int, prune: bool, taxonomy: Path | None,
         glossary: Path | None) -> None:
    """Show what rebuilding the deck would change for people who imported it, and how to import it.

    Compares a build of SEEDS (default: seeds/) with the deck's lock file: new,
    changed, unchanged, obsolete and pruned notes with samples, then the import
    advice.  Writes nothing.

    \b
    Example:
        deckgen plan                        # seeds/ against decks/deckgen.lock.json
    """
    from .report.plan import plan_deck

    with _user_errors():
        options = BuildOptions(deck_name=deck_name, grace=grace, prune=prune, taxonomy=taxonomy, glossary=glossary)
        report = plan_deck(seeds or DEFAULT_SOURCES, output, options)
    for warning in report.warnings:
        click.echo(f"Warning: {warning}", err=True)
    click.echo("\n".join(report.lines()))


@cli.command()
@_SEEDS
@_GLOSSARY
def lint(seeds: tuple[Path, ...], glossary: Path | None) -> None:
    """Check seed files (default: seeds/) and print one `file:line: level: message` per problem.

    Exits 1 when there are errors (the problems `deckgen build` refuses), else 0.
    Acronyms are checked against the glossary a build would use.

    \b
    Example:
        deckgen lint seeds/new.txt
    """
    from .report.lint import lint_corpus

    with _user_errors():
        report = lint_corpus(seeds or DEFAULT_SOURCES, glossary=glossary)
    for finding in report.findings:
        click.echo(str(finding))
    click.echo(report.summary, err=True)
    click.get_current_context().exit(1 if report.errors else 0)


@cli.command()
@_SEEDS
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def stats(seeds: tuple[Path, ...], as_json: bool) -> None:
    """Numbers of the deck `build` would make from SEEDS (default: seeds/): PRs, decisions, cards by kind,
    topic and verdict, answer lengths, thin PRs, decisions with no card, warnings.

    \b
    Example:
        deckgen stats --json | jq .cards_by_kind
    """
    import json

    from .report.stats import collect_stats, format_stats

    with _user_errors():
        numbers = collect_stats(seeds or DEFAULT_SOURCES)
    click.echo(json.dumps(numbers.to_dict(), ensure_ascii=False, indent=2) if as_json else format_stats(numbers))


@cli.command()
@_SEEDS
@click.option("--topic", "topics", multiple=True, metavar="ID", help="Only cards tagged topic::ID (repeatable).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice([k.value for k in CardKind]),
              help="Only cards of this kind (repeatable).")
@click.option("--grep", default="", metavar="TEXT", help="Only cards whose text, PR summary or tags contain TEXT.")
@click.option("--limit", type=click.IntRange(min=0), metavar="N", help="Show at most N cards.")
@click.option("--html", "html_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Write one self-contained HTML page rendering the cards with Anki's templates.")
def preview(seeds: tuple[Path, ...], topics: tuple[str, ...], kinds: tuple[str, ...], grep: str,
            limit: int | None, html_file: Path | None) -> None:
    """Show the cards `build` would make from SEEDS (default: seeds/), grouped by PR.

    \b
    Example:
        deckgen preview --kind why --grep CUDA --limit 5
        deckgen preview --html preview.html
    """
    from .report.preview import CardFilter, format_preview, make_preview
    from .report.preview_html import write_preview_html

    with _user_errors():
        shown = make_preview(seeds or DEFAULT_SOURCES, CardFilter(topics, kinds, grep, limit))
        written = write_preview_html(shown, html_file) if html_file else None
    if written:
        click.echo(f"Wrote {shown.summary} → {written}")
    else:
        click.echo(format_preview(shown, style=click.style), nl=False)  # colours are dropped when stdout is not a terminal
        click.echo(shown.summary, err=True)


@cli.command()
@_SEEDS
@_TAXONOMY
@_GLOSSARY
@click.option("--explain", is_flag=True, help="Also show, per PR, the words that gave it each of its topics.")
def topics(seeds: tuple[Path, ...], taxonomy: Path | None, glossary: Path | None, explain: bool) -> None:
    """List the topics with their PR and card counts, and the PRs without a topic.

    \b
    Example:
        deckgen topics                      # topics.toml beside seeds/ over the built-in taxonomy
        deckgen topics their-seeds/ --explain
        deckgen topics seeds/ --taxonomy my-topics.toml
    """
    from .pipeline import list_topics

    with _user_errors():
        report = list_topics(seeds or DEFAULT_SOURCES, BuildOptions(taxonomy=taxonomy, glossary=glossary), explain=explain)
    click.echo(report.table())
    if explain:
        click.echo()
        click.echo(report.explanation())


# "A few hundred entries": below this a build takes a few seconds at most and a bar would only flicker.
PROGRESS_MIN_ENTRIES = 200


class ConsoleProgress:
    """Click's progress bar on *stream* for builds of many entries; per-stage timings when *verbose*.

    Use it as a context manager, so that the bar is finished even when the build stops with an error.
    """

    def __init__(self, stream: TextIO, *, bar: bool, verbose: bool, min_entries: int = PROGRESS_MIN_ENTRIES) -> None:
        self.stream = stream
        self.want_bar = bar
        self.verbose = verbose
        self.min_entries = min_entries
        self._bar: click.progressbar | None = None  # type: ignore[valid-type]

    @classmethod
    def for_stderr(cls, *, quiet: bool, verbose: bool) -> ConsoleProgress:
        """The bar only when stderr is a terminal (nothing when piped) and never with *quiet*."""
        stream = sys.stderr  # read at call time: the CLI (and Click's test runner) may have swapped it
        return cls(stream, bar=not quiet and stream.isatty(), verbose=verbose and not quiet)

    def begin(self, total: int, label: str = "Making cards") -> None:
        if self.want_bar and total >= self.min_entries:
            self._bar = click.progressbar(length=total, label=label, file=self.stream)
            self._bar.__enter__()

    def advance(self, count: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(count)

    def end(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None

    def stage(self, name: str, seconds: float, detail: str) -> None:
        if self.verbose:
            click.echo(f"{name:<10}{seconds:8.3f} s  {detail}".rstrip(), file=self.stream)

    def __enter__(self) -> ConsoleProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.end()
