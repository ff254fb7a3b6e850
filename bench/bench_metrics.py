"""Benchmark the metric engine against the nlg-eval route, and end to end through compute_metrics.

    python bench/bench_metrics.py --pairs 10000 [--pairs 100000] [--baseline-pairs 3000]
        [--no-meteor] [--no-e2e] [--neural] [--family bleu1-4]... [--chunk-size 2000]
        [--e2e-processes 2] [--e2e-threads 2] [--database-url URL] [--json out.json]

Generated (context, reference, response) triples with dialogue-like lengths. For each metric
family it prints the engine's pairs/s (best of three calls; METEOR: one), the nlg-eval route's
pairs/s (pycocoevalcap scorers called pair by pair, each scorer built once; the embedding
metrics as nlg-eval computes them word by word with sklearn's cosine_similarity) and their
ratio; METEOR's Java start-up separately; then pairs/s end to end through `compute_metrics` on
a fresh SQLite database (database writes included; `--database-url` names another, for example a
scratch PostgreSQL database: its tables are migrated and the bench's own datasets replaced), the
median of three runs (METEOR: one; the one-process runs' seconds are all in the JSON), and the peak
memory of scoring one chunk.
With `--e2e-processes N` the run end to end is timed a second time with `compute_metrics
--processes N` (this process and N - 1 forked ones, each scoring its share of the chunks), in
columns of its own: "e2e" alone is always one process. `--e2e-threads` is the command's `--threads`
(its default, 2: one chunk written while the next is scored; 1 scores and writes in turn).
Last, the command as a user runs it: `python manage.py compute_metrics` in a fresh process (start-up
included) for BLEU-1..4 + ROUGE-L + CIDEr, against the nlg-eval route for the same three families on
the same pairs (timed on all of them, in turn with the command's runs; the ratio from the route
rates of the rows above is printed too), with a fresh `manage.py check` beside it: the share of the
command that is start-up; then the floor no fresh command can go below (Django with two built-in
apps, the engine's libraries, the engine's own time on the pairs) and the ratio it would give.
"""

import argparse
import compileall
import importlib
import io
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.meteor.meteor import Meteor
from pycocoevalcap.rouge.rouge import Rouge
from sklearn.metrics.pairwise import cosine_similarity

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import scoring.metrics as engine  # noqa: E402  (after the path set-up above)
from scoring.metrics.glove import glove  # noqa: E402
from scoring.metrics.text import words  # noqa: E402

FAMILIES = {
    "bleu1-4": ["bleu1", "bleu2", "bleu3", "bleu4"],
    "rouge_l": ["rouge_l"],
    "cider": ["cider"],
    "glove (3 metrics)": ["embedding_average", "greedy_matching", "vector_extrema"],
    "meteor": ["meteor"],
}
ENGINE_REPEATS = 3
# Runs end to end take 0.05-0.3 s at 10,000 pairs, where this shared machine's noise (and the first
# run of a metric family: its statements built and prepared, its rows new to the score index) moved
# a single run by 25-50%; the route, timed over seconds, is steadier. The median of three is
# reported (not the best, as for the engine's calls).
E2E_REPEATS = 3
WORDS = (  # noqa: SIM905  (one readable string)
    "i you we they it the a an is are was were do does did not no yes to of and in on at for with my your "
    "that this what how why where when like love good great really think know want go went see movie music "
    "dog cat food pizza work school friend family weekend today tomorrow fun nice sure thanks hello hi ! ? , ."
).split()


def triples(n, seed=7):
    rng = random.Random(seed)

    def sentence():
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 22)))

    return [(sentence() + " ||| " + sentence(), sentence(), sentence()) for _ in range(n)]


def rate(n, seconds):
    return n / seconds if seconds > 0 else float("inf")


def timed(fn):
    """Wall-clock seconds. The machine is shared, so `cpu_timed` is reported beside it."""
    return cpu_timed(fn)[0]


def cpu_timed(fn):
    """(wall, CPU of this process) seconds.

    The machine is shared; CPU time is what other users do not steal. "cpu ratio" compares CPU
    times (not meaningful for METEOR, whose work runs in the Java child process).
    """
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


# --- the nlg-eval route ---------------------------------------------------------------------


def nlgeval_route(family, hyps, refs):
    """(start-up s, (wall, cpu) s) for pycocoevalcap scorers called pair by pair, each built once."""
    startup = 0.0
    if family == "glove (3 metrics)":
        return startup, cpu_timed(lambda: [nlgeval_embedding(h, r) for h, r in zip(hyps, refs, strict=True)])
    if family == "meteor":
        start = time.perf_counter()
        scorer = Meteor()
        scorer.compute_score({0: ["warm up"]}, {0: ["warm up"]})
        startup = time.perf_counter() - start
    else:
        scorer = {"bleu1-4": Bleu(4), "rouge_l": Rouge(), "cider": Cider()}[family]

    def loop():
        for h, r in zip(hyps, refs, strict=True):
            if family == "bleu1-4":
                scorer.compute_score({0: r}, {0: [h]}, verbose=0)
            else:
                scorer.compute_score({0: r}, {0: [h]})

    return startup, cpu_timed(loop)


_vocab = {}  # word -> row, as gensim's KeyedVectors lookup


def nlgeval_embedding(hyp, refs):
    """nlg-eval's eval_emb_metrics for one pair: word-by-word lookups, sklearn cosines, max over refs."""
    emb = glove()
    if not _vocab:
        _vocab.update((w, i) for i, w in enumerate(emb.index))

    def features(text):
        vecs = [emb.vectors[_vocab.get(w, emb.unk_row)] for w in words(text)]
        total = np.sum(vecs, axis=0)
        high, low = np.max(vecs, axis=0), np.min(vecs, axis=0)
        extrema = [
            x if ((x > y or x < -y) and y > 0) or ((x < y or x > -y) and y < 0) else y
            for x, y in zip(high, low, strict=True)
        ]
        return vecs, total / np.linalg.norm(total), extrema

    hv, ha, hx = features(hyp)
    best = [-1.0, -1.0, -1.0]
    for ref in refs:
        rv, ra, rx = features(ref)
        sim = cosine_similarity(rv, hv)
        best[0] = max(best[0], cosine_similarity([ra], [ha])[0, 0])
        best[1] = max(best[1], (sim.max(axis=0).mean() + sim.max(axis=1).mean()) / 2)
        best[2] = max(best[2], cosine_similarity([rx], [hx])[0, 0])
    return best


# --- end to end -----------------------------------------------------------------------------


def setup_django(database_url):
    os.environ["DATABASE_URL"] = database_url
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # as in production: no per-query SQL logging
    logging.getLogger("celery").setLevel(logging.WARNING)  # eager tasks log every success

    call_command("migrate", verbosity=0)


def load_dataset(data, name):
    from annotation.models import Context, Dataset, Reference, Response, System

    Dataset.objects.filter(name=name).delete()  # an earlier run's, in a database given by URL
    dataset = Dataset.objects.create(name=name)
    system = System.objects.create(dataset=dataset, name="generated")
    contexts = Context.objects.bulk_create(
        Context(dataset=dataset, external_id=f"c{i}", position=i, turns=[{"speaker": None, "text": c}])
        for i, (c, _, _) in enumerate(data)
    )
    Reference.objects.bulk_create(Reference(context=c, text=r) for c, (_, r, _) in zip(contexts, data, strict=True))
    Response.objects.bulk_create(
        Response(context=c, system=system, text=h) for c, (_, _, h) in zip(contexts, data, strict=True)
    )
    return dataset


def end_to_end(dataset, names, chunk_size, processes=1, threads=2):
    from django.core.management import call_command

    from scoring.models import MetricScore

    # every timed run writes its rows afresh, as on a dataset never scored: the rows of an earlier
    # run of the same metrics (with --e2e-processes) are deleted first, untimed
    MetricScore.objects.filter(metric__in=names).delete()

    return cpu_timed(
        lambda: call_command(
            "compute_metrics",
            "--dataset",
            dataset.name,
            *[arg for name in names for arg in ("--metric", name)],
            "--force",
            "--chunk-size",
            str(chunk_size),
            "--no-progress",
            "--processes",
            str(processes),
            "--threads",
            str(threads),
            stdout=io.StringIO(),
        )
    )


# --- the command as a user runs it ----------------------------------------------------------

AS_RUN = ("bleu1-4", "rouge_l", "cider")  # issue 23's command: BLEU-1..4 + ROUGE-L + CIDEr
# Rounds of (route, fresh command): single rounds of this shared machine ranged over 4.4-7.2x in one
# run of the bench, so the median of five.
AS_RUN_ROUNDS = 5


def fresh_process(*args, env=None):
    """Wall seconds of `python manage.py ARGS` in a new interpreter, start-up included.

    It inherits this process's environment (the DATABASE_URL `setup_django` set, no broker) unless
    `env` replaces it.
    """
    start = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def compile_project():
    """Write the project's bytecode caches (`__pycache__`), untimed, as any earlier run would have.

    Python writes them on a module's first import, unless PYTHONDONTWRITEBYTECODE is set (as it is
    in some containers and CI images): then every process compiles the project's ~200 modules from
    source again, ~0.3 s of start-up a user who has run any command before does not pay. pip
    compiles installed packages when it installs them, so this covers the project alone.
    """
    dirs = [path for path in ROOT.iterdir() if (path / "__init__.py").exists()]
    for path in dirs:
        compileall.compile_dir(path, quiet=1)
    compileall.compile_file(ROOT / "manage.py", quiet=1)


def median(values):
    return sorted(values)[len(values) // 2]


# What any fresh metric command pays before RateLab's own code runs: Python with Django and two
# built-in apps, and the libraries the engine computes with. Started and ended as manage.py starts
# and ends a command (config/runtime/startup.py): the collector off while loading, everything frozen at exit.
BARE_DJANGO = (
    "import gc; gc.disable(); import django; from django.conf import settings; settings.configure("
    "INSTALLED_APPS=['django.contrib.contenttypes', 'django.contrib.auth'], DATABASES={'default':"
    " {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}}); django.setup(); gc.freeze()"
)
# The engine's word-overlap metrics need NumPy and Arrow (no pandas: scoring/metrics/ngrams.py).
ENGINE_LIBRARIES = "import gc; gc.disable(); import numpy, pyarrow.compute; gc.freeze()"


def fresh_python(code):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def floor_seconds(rows, n):
    """The least a fresh command could take on these pairs: bare Django, the engine's libraries
    (each a fresh interpreter, its own start-up counted once) and the engine's own in-process
    time on the AS_RUN families (rates above), before a row is read or written."""
    bare = median([fresh_python("pass") for _ in range(E2E_REPEATS)])
    django_s = median([fresh_python(BARE_DJANGO) for _ in range(E2E_REPEATS)])
    libraries_s = median([fresh_python(ENGINE_LIBRARIES) for _ in range(E2E_REPEATS)]) - bare
    engine_s = sum(n / rows[family]["engine_pairs_per_s"] for family in AS_RUN)
    return {"django_s": django_s, "libraries_s": libraries_s, "engine_s": engine_s}


def as_run(dataset, rows, chunk_size, hyps, refs):
    """The command in a fresh process against the nlg-eval route, for the AS_RUN families on the n pairs
    `hyps`, `refs` (those of `dataset`).

    AS_RUN_ROUNDS rounds, each the nlg-eval route on all n pairs (the three families' scorers, pair by pair)
    and then a fresh `compute_metrics` process: this shared machine's speed drifts by a third within
    minutes, so the ratio compares times taken side by side (median of the rounds' ratios), not the
    route extrapolated from the rows above (also reported, as before). Then three fresh `manage.py
    check` (start-up alone) and the floor.
    """
    from scoring.models import MetricScore

    names = [name for family in AS_RUN for name in FAMILIES[family]]
    command = ["compute_metrics", "--dataset", dataset.name, *[a for name in names for a in ("--metric", name)]]
    command += ["--force", "--no-progress", "--chunk-size", str(chunk_size)]
    compile_project()
    # with the caches but without writing any: the same for every run, whatever PYTHONDONTWRITEBYTECODE says
    cached = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    n = len(hyps)
    runs, routes = [], []
    for _ in range(AS_RUN_ROUNDS):
        routes.append(sum(nlgeval_route(family, hyps, refs)[1][0] for family in AS_RUN))
        MetricScore.objects.filter(metric__in=names).delete()  # untimed: rows written afresh, as in end_to_end
        runs.append(fresh_process(*command, env=cached))
    checks = [fresh_process("check", env=cached) for _ in range(E2E_REPEATS)]
    ratios = [route / run for route, run in zip(routes, runs, strict=True)]
    rows_route_s = sum(n / rows[family]["nlgeval_pairs_per_s"] for family in AS_RUN)
    floor = floor_seconds(rows, n)
    floor_s = sum(floor.values())
    return {
        "command_runs_s": runs,
        "command_s": median(runs),
        "check_s": median(checks),
        "route_runs_s": routes,
        "route_s": median(routes),
        "ratios": ratios,
        "ratio": median(ratios),
        "route_from_rows_s": rows_route_s,
        "ratio_from_rows": rows_route_s / median(runs),
        "floor": floor,
        "floor_s": floor_s,
        "floor_ratio": median(routes) / floor_s,
    }


def chunk_memory(names, hyps, refs):
    tracemalloc.start()
    engine.score(hyps, refs, names)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


HEADER = (
    f"{'family':18} {'engine p/s':>11} {'nlg-eval p/s':>12} {'ratio':>6} {'cpu ratio':>9}"
    f" {'e2e p/s':>9} {'e2e ratio':>9} {'e2e cpu ratio':>13} {'chunk MB':>8}"
)


def run_size(n, families, args):
    data = triples(n)
    hyps = [h for _, _, h in data]
    refs = [[r] for _, r, _ in data]
    base_n = min(n, args.baseline_pairs)
    print(f"\n== {n} pairs (nlg-eval route timed on {base_n}; p/s are wall-clock) ==")
    processes = args.e2e_processes if not args.no_e2e else 1
    multi = f"e2e {processes} proc"
    print(HEADER + (f" {multi + ' p/s':>16} {multi + ' ratio':>18}" if processes > 1 else ""))
    dataset = None if args.no_e2e else load_dataset(data, f"bench-{n}")
    rows = {}
    for family, names in families.items():
        row = measure(
            family,
            names,
            hyps,
            refs,
            base_n=base_n,
            dataset=dataset,
            chunk_size=args.chunk_size,
            processes=processes,
            threads=args.e2e_threads,
        )
        rows[family] = row
        nan = float("nan")
        print(
            f"{family:18} {row['engine_pairs_per_s']:11,.0f} {row.get('nlgeval_pairs_per_s', nan):12,.0f}"
            f" {row.get('ratio', nan):6.1f} {row.get('cpu_ratio', nan):9.1f} {row.get('e2e_pairs_per_s', nan):9,.0f}"
            f" {row.get('e2e_ratio', nan):9.1f} {row.get('e2e_cpu_ratio', nan):13.1f} {row['chunk_peak_mb']:8.1f}"
            + (
                f" {row.get('e2e_multi_pairs_per_s', nan):16,.0f} {row.get('e2e_multi_ratio', nan):18.1f}"
                if processes > 1
                else ""
            ),
            flush=True,
        )
        if family == "meteor":
            startups = f"engine {row['engine_startup_s']:.1f} s, pycocoevalcap {row['nlgeval_startup_s']:.1f} s"
            print(f"{'':18} METEOR start-up: {startups}")
    if dataset is not None and all(family in rows and "nlgeval_pairs_per_s" in rows[family] for family in AS_RUN):
        fresh = as_run(dataset, rows, args.chunk_size, hyps, refs)
        rows["as run: compute_metrics, fresh process"] = fresh
        print(
            f"as a user runs it, BLEU-1..4 + ROUGE-L + CIDEr: `manage.py compute_metrics` (fresh process)"
            f" {fresh['command_s']:.2f} s, nlg-eval route on the same {n:,} pairs {fresh['route_s']:.2f} s (timed"
            f" between the command's runs), ratio {fresh['ratio']:.1f}x (rounds {min(fresh['ratios']):.1f}-"
            f"{max(fresh['ratios']):.1f}x); from the rows above: route {fresh['route_from_rows_s']:.2f} s,"
            f" {fresh['ratio_from_rows']:.1f}x; `manage.py check` (fresh process) {fresh['check_s']:.2f} s",
            flush=True,
        )
        floor = fresh["floor"]
        print(
            f"{'':18} the floor of any fresh command: Django alone {floor['django_s']:.2f} s + numpy,"
            f" pyarrow.compute {floor['libraries_s']:.2f} s + the engine in-process {floor['engine_s']:.2f} s ="
            f" {fresh['floor_s']:.2f} s, at most {fresh['floor_ratio']:.1f}x the route",
            flush=True,
        )
    return rows


def measure(family, names, hyps, refs, *, base_n, dataset, chunk_size, processes=1, threads=2):
    n = len(hyps)
    row = {}
    if family == "meteor":
        row["engine_startup_s"] = timed(lambda: engine.score(["warm up"], [["warm up"]], ["meteor"]))
    # the best of ENGINE_REPEATS warm calls: a worker scores chunk after chunk, so the first call's
    # one-off costs (page faults of fresh arrays, lazy imports) are not what a pair costs
    repeats = 1 if family == "meteor" else ENGINE_REPEATS  # METEOR's pairs/s is the jar's, and slow
    wall, cpu = min(cpu_timed(lambda: engine.score(hyps, refs, names)) for _ in range(repeats))
    row["engine_pairs_per_s"] = rate(n, wall)
    row["engine_cpu_pairs_per_s"] = rate(n, cpu)
    if family in FAMILIES:
        startup, (route_wall, route_cpu) = nlgeval_route(family, hyps[:base_n], refs[:base_n])
        row["nlgeval_pairs_per_s"] = rate(base_n, route_wall)
        row["ratio"] = row["engine_pairs_per_s"] / row["nlgeval_pairs_per_s"]
        if family != "meteor":  # the jar's CPU time is not this process's
            row["nlgeval_cpu_pairs_per_s"] = rate(base_n, route_cpu)
            row["cpu_ratio"] = row["engine_cpu_pairs_per_s"] / row["nlgeval_cpu_pairs_per_s"]
        else:
            row["nlgeval_startup_s"] = startup
    if dataset is not None:
        repeats = 1 if family == "meteor" else E2E_REPEATS
        runs = [end_to_end(dataset, names, chunk_size, threads=threads) for _ in range(repeats)]
        e2e_wall, e2e_cpu = sorted(runs)[len(runs) // 2]
        row["e2e_runs_s"] = [wall for wall, _ in runs]
        row["e2e_pairs_per_s"] = rate(n, e2e_wall)
        row["e2e_cpu_pairs_per_s"] = rate(n, e2e_cpu)
        if "nlgeval_pairs_per_s" in row:
            row["e2e_ratio"] = row["e2e_pairs_per_s"] / row["nlgeval_pairs_per_s"]
        if "nlgeval_cpu_pairs_per_s" in row:
            row["e2e_cpu_ratio"] = row["e2e_cpu_pairs_per_s"] / row["nlgeval_cpu_pairs_per_s"]
        if processes > 1:  # the same run with forked processes, reported apart (several cores)
            row["e2e_processes"] = processes
            walls = sorted(end_to_end(dataset, names, chunk_size, processes, threads)[0] for _ in range(repeats))
            row["e2e_multi_pairs_per_s"] = rate(n, walls[len(walls) // 2])
            if "nlgeval_pairs_per_s" in row:
                row["e2e_multi_ratio"] = row["e2e_multi_pairs_per_s"] / row["nlgeval_pairs_per_s"]
    chunk = min(n, chunk_size)
    row["chunk_peak_mb"] = chunk_memory(names, hyps[:chunk], refs[:chunk])
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, action="append", help="Number of triples; repeatable (default 10000).")
    parser.add_argument("--baseline-pairs", type=int, default=3000, help="Pairs timed on the nlg-eval route.")
    parser.add_argument("--chunk-size", type=int, default=2000)
    parser.add_argument("--no-meteor", action="store_true")
    parser.add_argument("--no-e2e", action="store_true")
    parser.add_argument("--neural", action="store_true", help="Also time sentence_cosine and bertscore_f1.")
    parser.add_argument(
        "--family", action="append", choices=sorted(FAMILIES), help="Only these metric families; repeatable."
    )
    parser.add_argument(
        "--e2e-processes",
        type=int,
        default=1,
        help="Also time end to end with compute_metrics --processes N (separate columns).",
    )
    parser.add_argument(
        "--e2e-threads", type=int, default=2, help="compute_metrics --threads for the runs end to end (default 2)."
    )
    parser.add_argument(
        "--database-url",
        help="Database for the runs end to end (default: a fresh SQLite file), e.g. a scratch PostgreSQL database.",
    )
    parser.add_argument("--json", help="Write the figures here too.")
    args = parser.parse_args(argv)
    families = {name: FAMILIES[name] for name in args.family} if args.family else dict(FAMILIES)
    if args.no_meteor:
        families.pop("meteor", None)
    if args.neural:
        families["neural (2 metrics)"] = ["sentence_cosine", "bertscore_f1"]
    report = {"cpu_count": os.cpu_count(), "e2e_threads": args.e2e_threads, "sizes": {}}
    glove()  # resources load once per process; the route and the engine share them
    tmp = tempfile.TemporaryDirectory()
    if not args.no_e2e:
        setup_django(args.database_url or f"sqlite:///{Path(tmp.name) / 'bench.sqlite3'}")
        # Import the command (and torch, which the ADEM metrics pull in) before any timing, and let
        # Celery finalise its app and load its result backend (~50 ms): a worker does both once, at
        # start-up, not per run.
        importlib.import_module("scoring.management.commands.compute_metrics")
        from scoring import tasks

        tasks.compute_metrics_chunk.app.finalize()
        _ = tasks.compute_metrics_chunk.backend
    for n in args.pairs or [10000]:
        report["sizes"][n] = run_size(n, families, args)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
