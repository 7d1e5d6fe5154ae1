#!/usr/bin/env python3
"""Check seed files and their gold files for a labelled review corpus.

    python3 check_gold.py DIR          # DIR holds seeds/*.txt and gold/*.json

Seed file: UTF-8; line 1 is the GitHub repository (owner/name); a blank line; then entries separated by
blank lines, each a one-line PR summary, a blank line, and a review paragraph (one line, or several lines
with no blank line between them).

Gold file gold/<name>.json for seeds/<name>.txt: a JSON list, one object per entry, in file order, with
file, title, verdict (deep|skim|skip), verdict_phrase, style, pr (https://github.com/OWNER/REPO/pull/N),
decisions [{key, alt_keys, gist}], not_decisions [...], identifiers [...], topics [...].
Every key, alt_key and not_decisions item must occur verbatim in the entry (title + review), compared
without backticks and ** markers.  A decision key must not lie only inside not_decisions parts.
"""
import json
import re
import sys
from pathlib import Path

STYLES = {"numbered", "headings", "narrative", "short", "mixed"}
REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+$")
PR = re.compile(r"^https://github\.com/([A-Za-z0-9._-]+/[A-Za-z0-9._-]+)/pull/\d+$")


def plain(s):
    return s.replace("**", "").replace("`", "")


def entries(path):
    lines = path.read_text(encoding="utf-8").split("\n")
    problems = []
    if not REPO.match(lines[0].strip()):
        problems.append(f"{path.name}:1: line 1 must be owner/name")
    blocks, cur, start = [], [], None
    for i, line in enumerate(lines[1:], start=2):
        if line.strip():
            if not cur:
                start = i
            cur.append(line.strip())
        elif cur:
            blocks.append((start, cur))
            cur = []
    if cur:
        blocks.append((start, cur))
    out = []
    if len(blocks) % 2:
        problems.append(f"{path.name}: odd number of blocks: every summary line needs a blank line and a review")
    for k in range(0, len(blocks) - 1, 2):
        (ls, summary), (_, review) = blocks[k], blocks[k + 1]
        if len(summary) != 1:
            problems.append(f"{path.name}:{ls}: the summary must be one line")
        out.append((summary[0], "".join(review)))
    return lines[0].strip(), out, problems


def main(root):
    root = Path(root)
    problems, n_prs, n_dec = [], 0, 0
    for seed in sorted((root / "seeds").glob("*.txt")):
        repo, ents, probs = entries(seed)
        problems += probs
        gpath = root / "gold" / (seed.stem + ".json")
        if not gpath.exists():
            problems.append(f"{seed.name}: no gold file {gpath.name}")
            continue
        try:
            gold = json.loads(gpath.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            problems.append(f"{gpath.name}: bad JSON: {e}")
            continue
        if [g.get("title") for g in gold] != [t for t, _ in ents]:
            problems.append(f"{gpath.name}: titles differ from the seed file's summaries (same order, verbatim)")
            continue
        for g, (title, review) in zip(gold, ents):
            where = f"{gpath.name}: {title[:30]}"
            text = plain(title + "\n" + review)
            for field in ("file", "title", "verdict", "verdict_phrase", "style", "pr", "decisions", "not_decisions", "identifiers", "topics"):
                if field not in g:
                    problems.append(f"{where}: missing {field}")
            if g.get("file") != seed.name:
                problems.append(f"{where}: file must be {seed.name}")
            if g.get("verdict") not in ("deep", "skim", "skip"):
                problems.append(f"{where}: verdict must be deep, skim or skip")
            if g.get("style") not in STYLES:
                problems.append(f"{where}: style must be one of {sorted(STYLES)}")
            m = PR.match(g.get("pr", ""))
            if not m or m.group(1).lower() != repo.lower():
                problems.append(f"{where}: pr must be https://github.com/{repo}/pull/N")
            nd = [plain(p) for p in g.get("not_decisions", [])]
            for p in nd:
                if p not in text:
                    problems.append(f"{where}: not_decisions item not verbatim in the review: {p[:40]}")
            spans = [(m.start(), m.start() + len(p)) for p in nd for m in re.finditer(re.escape(p), text)] if nd else []
            if not g.get("decisions"):
                problems.append(f"{where}: no decisions (every PR has at least its headline change)")
            for d in g.get("decisions", []):
                n_dec += 1
                if not d.get("gist"):
                    problems.append(f"{where}: decision without gist: {d.get('key')}")
                for k in [d.get("key", "")] + list(d.get("alt_keys", [])):
                    pk = plain(k)
                    if not pk or pk not in text:
                        problems.append(f"{where}: key not verbatim in title or review: {k}")
                        continue
                    occ = [(m.start(), m.end()) for m in re.finditer(re.escape(pk), text)]
                    if all(any(a <= s and e <= b for a, b in spans) for s, e in occ):
                        problems.append(f"{where}: key only inside not_decisions: {k}")
            n_prs += 1
    for p in problems:
        print(p)
    print(f"{n_prs} PRs, {n_dec} decisions, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
