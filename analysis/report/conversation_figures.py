"""The figures of the report's Conversations section, from `ConversationInputs` (no queries here).

Per system: each whole-conversation aspect's mean over conversations (bootstrap CI) and a ranking
with significance clusters; per-turn aspects the same over each conversation's mean turn score,
and yes/no per-turn aspects (a 0-1 scale: ParlAI's flags) as rates with Wilson intervals. ACUTE
comparisons: per question, win rates and a Bradley-Terry ranking. Agreement per kind of answer.
The stored conversation metrics against whole-conversation ratings, at conversation and system
level; and how a conversation's per-turn ratings relate to its overall score.
"""

import importlib

import numpy as np

from analysis import stats
from analysis.stats.permutation import permutation_tests, significance_clusters
from annotation.quality import agreement

OVERALL = "overall"
SINGLE_RATER = "one rating per item (a single rater): no agreement to compute"
WINNER_CODE = {"a": 0, "tie": 1, "b": 2}
# An LLM judge's whole-conversation scores of one aspect are stored as judge:<name>@<aspect>
# (scoring.services.metrics.conversations): they stand against that aspect only, as judge:<name>.
ASPECT_SEPARATOR = "@"


def _stats():
    # scipy.stats and scipy.optimize load when a report is computed, not when Django starts.
    return importlib.import_module("analysis.stats.conversations")


def _pairwise():
    return importlib.import_module("analysis.stats.pairwise")


def is_flag(scale):
    """A yes/no aspect: a scale of two values (0-1)."""
    return scale is not None and scale[1] - scale[0] == 1


def aspect_order(aspects):
    """Overall first (the headline), then the others by name."""
    return sorted(aspects, key=lambda aspect: (aspect != OVERALL, aspect))


def _item_means(rows, key):
    """`{aspect: {item: mean score}}` of `(…, item, …, aspect, score)` rows, `key` picking the item."""
    sums = {}
    for row in rows:
        aspect, score = row[-2], row[-1]
        entry = sums.setdefault(aspect, {}).setdefault(key(row), [0.0, 0])
        entry[0] += score
        entry[1] += 1
    return {aspect: {item: total / n for item, (total, n) in items.items()} for aspect, items in sums.items()}


def _system_rows(per_aspect, system_of, *, n_boot, seed, kind):
    """Per aspect, per system: mean of the conversations' values with its CI, and the ranking."""
    rows, ranking, tests = [], [], []
    for aspect in aspect_order(per_aspect):
        items = per_aspect[aspect]
        conversations = sorted(items)
        values = [items[c] for c in conversations]
        groups = [system_of[c] for c in conversations]
        means, samples = _stats().group_means(values, groups, n_boot=n_boot, seed=seed)
        for row in means:
            rows.append({"system": row.pop("group"), "aspect": aspect, **row})
        if n_boot and len(means) > 1:
            by_system = {r["system"]: r for r in rows if r["aspect"] == aspect}
            clusters, aspect_tests = _stats().ranked_clusters({s: r["mean"] for s, r in by_system.items()}, samples)
            for system, cluster in clusters.items():
                ranking.append({"kind": kind, "aspect": aspect, "system": system, "cluster": cluster,
                                **{k: by_system[system][k] for k in ("mean", "ci_low", "ci_high", "n")}})  # fmt: skip
            tests += [{"kind": kind, "aspect": aspect, **test} for test in aspect_tests]
    return rows, ranking, tests


def _flag_rows(turns, scales, system_of):
    """Per yes/no per-turn aspect and system: the share of ratings at the scale's top (yes)."""
    rows = []
    for aspect in sorted({row[3] for row in turns if is_flag(scales.get(row[3]))}):
        top = scales[aspect][1]
        own = [row for row in turns if row[3] == aspect]
        flags = [1.0 if row[4] == top else 0.0 for row in own]
        groups = [system_of[row[1]] for row in own]
        for row in _stats().proportions(flags, groups):
            rows.append({"system": row.pop("group"), "aspect": aspect, **row})
    return rows


def _acute(judgements, system_of, *, n_boot, seed):
    """Per question: each system's wins, losses, ties, win rate (Wilson) and Bradley-Terry strength
    (bootstrap CI over compared pairs of conversations), and the system-by-system matrix."""
    pairwise, arena = _pairwise(), importlib.import_module("analysis.stats.arena")
    rows, matrix = [], []
    for question in sorted({row[4] for row in judgements}):
        own = [row for row in judgements if row[4] == question]
        names = sorted({system_of[row[1]] for row in own} | {system_of[row[2]] for row in own})
        index = {name: i for i, name in enumerate(names)}
        pairs = {}
        context = np.array([pairs.setdefault(frozenset(row[1:3]), len(pairs)) for row in own], dtype=int)
        a = np.array([index[system_of[row[1]]] for row in own], dtype=int)
        b = np.array([index[system_of[row[2]]] for row in own], dtype=int)
        outcome = np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}[row[3]] for row in own])
        result = pairwise.ranking(names, context, a, b, outcome, n_boot=n_boot, seed=seed)
        low = [r["ci_low"] if r["ci_low"] is not None else np.nan for r in result["systems"]]
        high = [r["ci_high"] if r["ci_high"] is not None else np.nan for r in result["systems"]]
        ranks = arena.rank_upper_bound(low, high) if n_boot else [None] * len(low)
        for record, rank in zip(result["systems"], ranks, strict=True):
            decisive = record["wins"] + record["losses"]
            win_low, win_high = pairwise.wilson(record["wins"], decisive)
            rows.append({
                "system": record["system"], "question": question, "wins": record["wins"], "losses": record["losses"],
                "ties": record["ties"], "strength": record["strength"], "ci_low": record["ci_low"],
                "ci_high": record["ci_high"], "rank_ub": None if rank is None else int(rank),
                "win_rate": record["wins"] / decisive if decisive else None,
                "win_rate_ci_low": None if np.isnan(win_low) else win_low,
                "win_rate_ci_high": None if np.isnan(win_high) else win_high,
            })  # fmt: skip
        matrix += [{"question": question, **row} for row in result["matrix"]]
    return rows, matrix


def _agreement_row(kind, aspect, triples, scale):
    """Krippendorff's alpha (nominal for a yes/no or choice scale, ordinal for a rating scale), the
    median pairwise Cohen's kappa for yes/no aspects and comparisons, and the split-half ceiling."""
    per_item = {}
    for _annotator, item, _score in triples:
        per_item[item] = per_item.get(item, 0) + 1
    shared = sum(1 for n in per_item.values() if n >= 2)
    nominal = kind == "acute" or is_flag(scale)
    row = {"kind": kind, "aspect": aspect, "level": "nominal" if nominal else "ordinal", "n_ratings": len(triples),
           "n_items": len(per_item), "n_items_shared": shared,
           "n_annotators": len({t[0] for t in triples}), "alpha": None, "kappa": None, "split_half": None,
           "note": ""}  # fmt: skip
    if not shared:
        row["note"] = SINGLE_RATER
        return row
    values = list(range(scale[0], scale[1] + 1))
    row["alpha"] = agreement.krippendorff_alpha(triples, scale=values, level=row["level"])
    if nominal:
        pairs = agreement.pairwise_agreement(triples, scale=values)
        row["kappa"] = agreement.median_kappa(pairs)
    if kind != "acute":
        split = agreement.split_half_agreement(triples)
        row["split_half"] = split["pearson"]["mean"]
    return row


def _agreement(inputs):
    rows = []
    for aspect in aspect_order({r[2] for r in inputs.whole}):
        triples = [(r[0], r[1], r[3]) for r in inputs.whole if r[2] == aspect]
        rows.append(_agreement_row("whole", aspect, triples, inputs.scales.get(aspect, (1, 5))))
    for aspect in sorted({r[3] for r in inputs.turns}):
        triples = [(r[0], r[2], r[4]) for r in inputs.turns if r[3] == aspect]
        rows.append(_agreement_row("turn", aspect, triples, inputs.scales.get(aspect, (1, 5))))
    for question in sorted({r[4] for r in inputs.judgements}):
        triples = []
        for annotator, first, second, winner, asked in inputs.judgements:
            if asked == question:
                # the pair in one order (lower id first), so a code means the same side for everyone
                code = WINNER_CODE[winner] if first < second else 2 - WINNER_CODE[winner]
                triples.append((annotator, (min(first, second), max(first, second)), code))
        rows.append(_agreement_row("acute", question, triples, (0, 2)))
    return rows


def metrics_for_aspect(metrics, aspect):
    """`{name: values}` of the stored conversation metrics that stand against `aspect`: every
    reference-free one, and each judge's scores asked about this aspect (named judge:<name>)."""
    chosen = {}
    for name, values in metrics.items():
        base, separator, asked = name.partition(ASPECT_SEPARATOR)
        if not separator:
            chosen[name] = values
        elif asked == aspect:
            chosen[base] = values
    return chosen


def _metric_correlations(whole_means, inputs, *, n_boot, n_perm, seed):
    """Each stored metric against each whole-conversation aspect (a judge's whole-conversation
    scores against the aspect it was asked about only): over conversations (bootstrap CI, and per
    aspect the metrics' significance clusters from paired permutation tests) and over systems
    (Boot-Both CI), as the response metrics are."""
    conversation_rows, system_rows = [], []
    if not inputs.metrics:
        return conversation_rows, system_rows
    for aspect in aspect_order(whole_means):
        items = sorted(whole_means[aspect])
        human = np.array([whole_means[aspect][c] for c in items])
        columns = {
            name: np.array([np.nan if values.get(c) is None else values[c] for c in items], dtype=float)
            for name, values in sorted(metrics_for_aspect(inputs.metrics, aspect).items())
        }
        columns = {name: column for name, column in columns.items() if np.isfinite(column).any()}
        if not columns:
            continue
        correlations = stats.utterance_level(human, columns, n_boot=n_boot, seed=seed)
        tests = permutation_tests(human, columns, n_perm=n_perm, seed=seed) if n_perm > 0 else []
        clusters = significance_clusters({r["metric"]: r["pearson"] for r in correlations}, tests) if tests else {}
        for row in correlations:
            name = row.pop("metric")
            conversation_rows.append({"metric": name, "aspect": aspect, "cluster": clusters.get(name), **row})
        systems = np.array([inputs.system_of[c] for c in items], dtype=object)
        result = stats.system_level(human, columns, systems, n_boot=n_boot, seed=seed)
        for row in result["correlations"]:
            system_rows.append({"metric": row.pop("metric"), "aspect": aspect, **row})
    return conversation_rows, system_rows


def _turn_metric_correlations(turn_means, inputs, *, n_boot, seed):
    """Each stored turn metric against each per-turn aspect, over the rated system turns: a turn's
    human score is its mean over its annotators (a flag's: the share who ticked it); Pearson,
    Spearman and Kendall with 95% bootstrap CIs over turns, as responses' metrics are."""
    rows = []
    if not inputs.turn_metrics:
        return rows
    for aspect in sorted(turn_means):
        turns = sorted(turn_means[aspect])
        human = np.array([turn_means[aspect][t] for t in turns], dtype=float)
        columns = {
            name: np.array([np.nan if values.get(t) is None else values[t] for t in turns], dtype=float)
            for name, values in sorted(inputs.turn_metrics.items())
        }
        columns = {name: column for name, column in columns.items() if np.isfinite(column).any()}
        if not columns:
            continue
        for row in stats.utterance_level(human, columns, n_boot=n_boot, seed=seed):
            rows.append({"metric": row.pop("metric"), "aspect": aspect, **row})
    return rows


def _acute_consistency(repeats):
    """ACUTE's self-consistency: the share of swapped repeat pairs whose main answer mirrored the
    first (Wilson interval), over every annotator who met one; `[]` without repeats."""
    if not repeats:
        return []
    consistent, n = sum(bool(passed) for _, passed in repeats), len(repeats)
    low, high = _pairwise().wilson(consistent, n, 0.95)
    return [{"repeats": n, "consistent": consistent, "rate": consistent / n, "ci_low": float(low),
             "ci_high": float(high), "n_annotators": len({annotator for annotator, _ in repeats})}]  # fmt: skip


def _turns_vs_overall(turn_means, whole_means, inputs):
    """Per per-turn aspect: the correlation of a conversation's mean turn score, and of its worst
    turn (rating scales only), with its overall score."""
    overall = whole_means.get(OVERALL)
    rows = []
    if not overall:
        return rows
    for aspect in sorted(turn_means):
        by_turn = turn_means[aspect]
        conversation_of = {turn: conversation for _a, conversation, turn, _asp, _s in inputs.turns}
        summary = _stats().worst_and_mean([conversation_of[t] for t in by_turn], list(by_turn.values()))
        shared = sorted(c for c in summary if c in overall)
        target = [overall[c] for c in shared]
        for which, position in (("mean", 0), ("worst", 1)):
            if which == "worst" and is_flag(inputs.scales.get(aspect)):
                # which answer is the worst depends on the flag: yes is bad for "repetitive", good for "consistent"
                continue
            correlation = stats.correlate([summary[c][position] for c in shared], target)
            rows.append({"aspect": aspect, "summary": which, "overall_aspect": OVERALL, **correlation})
    return rows


def conversation_figures(inputs, *, n_boot, seed, n_perm=0):
    """The section's `conversations` object (see analysis.sections.conversations)."""
    whole_means = _item_means(inputs.whole, key=lambda row: row[1])
    turn_means = _item_means(inputs.turns, key=lambda row: row[2])  # per turn, over its annotators
    conversation_turn_means = {}  # per conversation, over its rated turns' means (rating scales only)
    conversation_of = {row[2]: row[1] for row in inputs.turns}
    for aspect, by_turn in turn_means.items():
        if is_flag(inputs.scales.get(aspect)):
            continue
        grouped = {}
        for turn, mean in by_turn.items():
            grouped.setdefault(conversation_of[turn], []).append(mean)
        conversation_turn_means[aspect] = {c: float(np.mean(v)) for c, v in grouped.items()}
    systems, ranking, tests = _system_rows(whole_means, inputs.system_of, n_boot=n_boot, seed=seed, kind="whole")
    turn_systems, turn_ranking, turn_tests = _system_rows(
        conversation_turn_means, inputs.system_of, n_boot=n_boot, seed=seed, kind="turn"
    )
    acute, acute_matrix = _acute(inputs.judgements, inputs.system_of, n_boot=n_boot, seed=seed)
    metrics, metrics_system = _metric_correlations(whole_means, inputs, n_boot=n_boot, n_perm=n_perm, seed=seed)
    turn_metrics = _turn_metric_correlations(turn_means, inputs, n_boot=n_boot, seed=seed)
    return {
        "n_conversations": len(inputs.system_of),
        "n_systems": len(set(inputs.system_of.values())),
        "n_ratings": len(inputs.whole),
        "n_turn_ratings": len(inputs.turns),
        "n_judgements": len(inputs.judgements),
        "scales": {aspect: list(scale) for aspect, scale in sorted(inputs.scales.items())},
        "systems": systems,
        "turn_systems": turn_systems,
        "ranking": ranking + turn_ranking,
        "ranking_tests": tests + turn_tests,
        "flags": _flag_rows(inputs.turns, inputs.scales, inputs.system_of),
        "acute": acute,
        "acute_matrix": acute_matrix,
        "acute_consistency": _acute_consistency(inputs.repeats),
        "agreement": _agreement(inputs),
        "metrics": metrics,
        "metrics_system": metrics_system,
        "turn_metrics": turn_metrics,
        "n_rated_turns": len({row[2] for row in inputs.turns}),
        "aspect_scope": inputs.aspect_scope,
        "exclusions": inputs.exclusions,
        "turns_vs_overall": _turns_vs_overall(turn_means, whole_means, inputs),
    }
