"""The pairwise ranking as Chatbot Arena shows it (issue 39), beside the pairwise section: Bradley-
Terry strengths with a vote bootstrap and Rank (UB) (`analysis.stats.arena`), on the natural-log
or the Elo-like scale (a report option); the length-controlled win rate of every system against a
baseline (a report option; by default the reference side, else the most judged system) and the
style-controlled strengths (`analysis.stats.style_control`), each beside its raw figure, with a
note where they differ. Same judgements as the pairwise section: this report's filters.
"""

import importlib

import numpy as np

from analysis.report.cells import interval, number
from analysis.report.display import Column, DisplayTable
from analysis.report.latex import latex_escape, tabular
from analysis.report.latex import number as latex_number
from analysis.report.population import kept_systems, population_clause
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present
from analysis.sections.pairwise import judgement_arrays
from annotation.kinds.pairwise.selectors import accepted_judgements, judgement_rows
from annotation.models import REFERENCE_SYSTEM_NAME, Response

STYLE_BOOTSTRAP = 100  # style-controlled fits are L-BFGS runs, not batched Newton steps: fewer resamples


def stats(name):
    return importlib.import_module(f"analysis.stats.{name}")


def choose_baseline(systems, a, b, wanted):
    """The report option's baseline when it is one of the judged systems; else the reference side;
    else the system in the most judgements (ties: the first by name)."""
    if wanted in systems:
        return wanted
    if REFERENCE_SYSTEM_NAME in systems:
        return REFERENCE_SYSTEM_NAME
    votes = np.bincount(np.concatenate([a, b]), minlength=len(systems))
    return systems[int(np.argmax(votes))]


def length_controlled(systems, votes, lengths_a, lengths_b, *, baseline):
    """Per system judged against `baseline`: raw and length-controlled win rate, and the note."""
    a, b, outcome = votes
    base = systems.index(baseline)
    rows = []
    for index, system in enumerate(systems):
        if index == base:
            continue
        first, second = (a == index) & (b == base), (a == base) & (b == index)
        if not (first.any() or second.any()):
            continue
        preference = np.concatenate([outcome[first], 1.0 - outcome[second]])
        mine = np.concatenate([lengths_a[first], lengths_b[second]])
        theirs = np.concatenate([lengths_b[first], lengths_a[second]])
        result = stats("style_control").length_controlled_win_rate(preference, mine, theirs)
        rows.append({"system": system, **result})
    return rows


def style_controlled(systems, votes, features_a, features_b, *, n_boot, seed):
    a, b, outcome = votes
    result = stats("style_control").style_controlled_strengths(
        (a, b, outcome), len(systems), features_a, features_b, n_boot=min(n_boot, STYLE_BOOTSTRAP), seed=seed
    )
    order = np.argsort(-np.asarray(result["raw_strengths"]), kind="stable")
    raw_rank = {systems[i]: rank for rank, i in enumerate(order.tolist(), 1)}
    rows = [
        {
            "system": system,
            "raw_strength": float(result["raw_strengths"][i]),
            "strength": float(result["strengths"][i]),
            "ci_low": None if result["ci_low"] is None else float(result["ci_low"][i]),
            "ci_high": None if result["ci_high"] is None else float(result["ci_high"][i]),
            "raw_rank": raw_rank[system],
        }
        for i, system in enumerate(systems)
    ]
    rows.sort(key=lambda row: -row["strength"])
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    moved = [
        {"system": systems[i], "raw_rank": ranks[0], "rank": ranks[1]} for i, ranks in sorted(result["moved"].items())
    ]
    note = None
    if moved:
        note = (
            "Style control moves "
            + "; ".join(f"{row['system']} from rank {row['raw_rank']} to {row['rank']}" for row in moved)
            + ": length and markdown sway the votes."
        )
    return {"systems": rows, "style": result["style"], "moved": moved, "note": note}


def response_texts(ids, chunk=500):
    """`{response id: text}`, read by id a chunk at a time (SQLite limits a query's parameters); by id,
    not by the dataset's contexts: a survey's reference side is a response of its own."""
    ids = sorted(ids)
    texts = {}
    for start in range(0, len(ids), chunk):
        texts.update(Response.with_references.filter(pk__in=ids[start : start + chunk]).values_list("pk", "text"))
    return texts


def arena_section(context):
    judgements = accepted_judgements(
        dataset=context.dataset,
        surveys=context.surveys,
        aspect=context.aspect,
        apply_exclusions=context.apply_exclusions,
    )
    kept = kept_systems(context.systems)
    if kept is not None:
        judgements = judgements.filter(response_a__system__name__in=kept, response_b__system__name__in=kept)
    rows = judgement_rows(judgements)
    if not rows:
        return None
    systems, _context, a, b, outcome = judgement_arrays(rows)
    arena = stats("arena")
    ranking = arena.arena_ranking(systems, a, b, outcome, n_boot=context.n_boot, seed=context.seed)
    for row in ranking:
        row["elo"] = float(arena.to_elo(row["strength"]))
        row["elo_low"] = None if row["ci_low"] is None else float(arena.to_elo(row["ci_low"]))
        row["elo_high"] = None if row["ci_high"] is None else float(arena.to_elo(row["ci_high"]))
    texts = response_texts({pk for row in rows for pk in (row[3], row[4])})
    features = {pk: stats("style_control").style_features(text) for pk, text in texts.items()}
    names = list(features[rows[0][3]])
    features_a = {name: np.array([features[row[3]][name] for row in rows], dtype=float) for name in names}
    features_b = {name: np.array([features[row[4]][name] for row in rows], dtype=float) for name in names}
    baseline = choose_baseline(systems, a, b, context.options.get("baseline"))
    return {
        "scale": context.options.get("scale", "log"),
        "systems": ranking,
        "baseline": baseline,
        "length_controlled": length_controlled(
            systems, (a, b, outcome), features_a["length"], features_b["length"], baseline=baseline
        ),
        "style_controlled": style_controlled(
            systems, (a, b, outcome), features_a, features_b, n_boot=context.n_boot, seed=context.seed
        ),
        "n_judgements": len(rows),
        "method": {
            "ranking": f"Bradley-Terry (Newton), ties half a win; {context.n_boot} multinomial vote resamples, 95% "
            "percentile intervals; Rank (UB) = 1 + systems whose lower bound is above this one's upper bound",
            "elo": "rating = 1000 + 400 * strength / ln 10 (FastChat's scale, no anchor)",
            "length_controlled": "AlpacaEval 2 style: logistic on tanh(length gap / sd), L2 on the length term "
            "chosen by 5-fold CV; sigmoid(intercept); none when every answer is longer (or every one shorter) "
            "than the baseline's, as equal length then lies outside the data",
            "style_controlled": "Arena style control: normalised differences of words, headers, bold spans and "
            f"list items as covariates; {min(context.n_boot, STYLE_BOOTSTRAP)} vote resamples",
        },
    }


def compute(context):
    return {"arena": arena_section(context)}


def _arena(data):
    return data.get("arena") or {}


def ranking_table(data):
    arena = _arena(data)
    elo = arena.get("scale") == "elo"
    digits = 0 if elo else 2
    rows = [
        [
            str(row["rank_ub"] or "–"),
            row["system"],
            number(row["elo"] if elo else row["strength"], digits),
            interval(row["elo_low"] if elo else row["ci_low"], row["elo_high"] if elo else row["ci_high"], digits),
            f"{row['votes']:,}",
            f"{row['wins']:,}",
            f"{row['ties']:,}",
            f"{row['losses']:,}",
        ]
        for row in arena.get("systems", [])
    ]
    return DisplayTable(
        name="arena_ranking",
        title="Arena ranking with Rank (UB)" + (" on the Elo scale" if elo else ""),
        download="arena ranking",
        columns=[
            Column("Rank (UB)", True),
            Column("System"),
            Column("Elo" if elo else "Strength", True),
            Column("95% CI", True),
            Column("Votes", True),
            Column("Wins", True),
            Column("Ties", True),
            Column("Losses", True),
        ],
        rows=rows,
        note="Rank (UB): the best rank the bootstrap intervals cannot rule out (1 + the systems whose lower bound is "
        "above this one's upper bound), as Chatbot Arena ranks. Votes resampled one by one (every judgement its own "
        f"draw); {'Elo = 1000 + 400 · strength / ln 10' if elo else 'strength: natural-log Bradley-Terry, mean 0'}. "
        f"Judgements of {population_clause(data)}.",
    )


def controlled_table(data):
    arena = _arena(data)
    lengths = {row["system"]: row for row in arena.get("length_controlled", [])}
    style = arena.get("style_controlled") or {}
    rows = []
    for row in style.get("systems", []):
        lc = lengths.get(row["system"], {})
        rows.append(
            [
                row["system"],
                number(lc.get("win_rate")),
                number(lc.get("lc_win_rate")),
                number(row["raw_strength"], 2),
                number(row["strength"], 2),
                f"{row['raw_rank']} → {row['rank']}",
            ]
        )
    # Each length note names its system: the stats function that writes it does not know the name.
    notes = [f"{system}: {lc['note']}." for system, lc in lengths.items() if lc.get("note")]
    notes += [style["note"]] if style.get("note") else []
    return DisplayTable(
        name="arena_controlled",
        title=f"Length- and style-controlled, beside the raw figures (baseline {arena.get('baseline', '–')})",
        download="length- and style-controlled",
        columns=[
            Column("System"),
            Column("Win rate vs baseline", True),
            Column("Length-controlled", True),
            Column("Strength", True),
            Column("Style-controlled", True),
            Column("Rank raw → controlled", True),
        ],
        rows=rows,
        note=" ".join(notes) or "Controlling for length and style changes no figure by 0.05 or more and moves no rank.",
    )


def present(data):
    return tables_present(ranking_table, controlled_table)(data)


def applies(data):
    return bool(data.get("arena"))


def _export(columns, records):
    return columns, [[record.get(column) for column in columns] for record in records]


def exports():
    ranking = [
        "rank_ub",
        "system",
        "strength",
        "ci_low",
        "ci_high",
        "elo",
        "elo_low",
        "elo_high",
        "votes",
        "wins",
        "losses",
        "ties",
    ]
    lc = ["system", "win_rate", "lc_win_rate", "phi", "penalty", "n", "note"]
    style = ["system", "raw_strength", "strength", "ci_low", "ci_high", "raw_rank", "rank"]
    return {
        "arena_ranking": lambda data: _export(ranking, _arena(data).get("systems", [])),
        "arena_length_controlled": lambda data: _export(
            ["baseline", *lc],
            [{"baseline": _arena(data).get("baseline"), **row} for row in _arena(data).get("length_controlled", [])],
        ),
        "arena_style_controlled": lambda data: _export(
            style, (_arena(data).get("style_controlled") or {}).get("systems", [])
        ),
    }


def latex(data):
    arena = _arena(data)
    if not arena:
        return []
    elo = arena.get("scale") == "elo"
    key, low, high, digits = ("elo", "elo_low", "elo_high", 0) if elo else ("strength", "ci_low", "ci_high", 2)
    cells = [
        [
            str(row["rank_ub"] or "--"),
            latex_escape(row["system"]),
            latex_number(row[key], digits),
            f"[{latex_number(row[low], digits)}, {latex_number(row[high], digits)}]",
            str(row["votes"]),
        ]
        for row in arena["systems"]
    ]
    caption = f"Arena-style ranking of the systems of {data.get('dataset', '')} (Rank (UB), 95% vote bootstrap)."
    header = ["Rank (UB)", "System", "Elo" if elo else "Strength", "95\\% CI", "Votes"]
    return [tabular(caption, "tab:arena-ranking", header, cells, columns="rlrrr")]


SECTION = Section(
    name="arena",
    keys=("arena",),
    compute=compute,
    applies=applies,
    template=TABLES_TEMPLATE,
    present=present,
    nav=tables_nav,
    page_tables={"arena_ranking": ranking_table, "arena_controlled": controlled_table},
    tables=exports(),
    latex=latex,
)
