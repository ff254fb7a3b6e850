"""`meteor_nltk`: NLTK's METEOR (nltk.translate.meteor_score) with WordNet from Debian.

A separately named metric, never a silent stand-in for `meteor` (the Java METEOR 1.5): NLTK's
re-implementation differs (no paraphrase table, different matcher), so its numbers differ.

WordNet comes from Debian's `wordnet-base` and `wordnet-sense-index` packages
(/usr/share/wordnet). NLTK's reader wants them as real files in `<dir>/corpora/wordnet` plus a
`lexnames` file Debian does not ship, so the folder is built once, lazily, under
~/.cache/ratelab/nltk_data (or RATELAB_NLTK_DATA, or a path passed in). Nothing is downloaded.
Tokens: text.words, lower-cased by NLTK's default preprocessing. Several references: NLTK's own
rule (the best score over references).
"""

import os
import shutil
import tempfile
import warnings
from functools import cache
from pathlib import Path

from scoring.metrics import resources
from scoring.metrics.registry import Metric, MetricUnavailable, describe_family, register
from scoring.metrics.text import words

DEBIAN_WORDNET = Path("/usr/share/wordnet")
# WordNet 3.0's lexicographer files, in id order (the "lexnames" file of the WordNet distribution)
LEXNAMES = (  # noqa: SIM905  (a list literal of 45 strings reads worse)
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_SYNTACTIC_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


def default_data_dir():
    return Path(os.environ.get("RATELAB_NLTK_DATA") or Path.home() / ".cache" / "ratelab" / "nltk_data")


def build_wordnet_dir(data_dir=None, source=DEBIAN_WORDNET):
    """Copy Debian's WordNet files into `<data_dir>/corpora/wordnet` (once); returns that folder."""
    target = Path(data_dir or default_data_dir()) / "corpora" / "wordnet"
    if _complete(target):
        return target
    if not (source / "data.noun").is_file():
        raise MetricUnavailable(
            f"meteor_nltk needs WordNet in {source}: install the Debian packages wordnet-base and wordnet-sense-index"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    # A folder of this process's own: workers starting together on a fresh machine (the demo's two
    # builds, a worker pool's first METEOR tasks) each copy into theirs, and none removes another's.
    staging = Path(tempfile.mkdtemp(prefix="wordnet.partial-", dir=target.parent))
    try:
        for path in source.iterdir():
            if path.is_file():
                # NLTK's reader resolves paths itself and fails on symlinks into /usr/share, so copy
                shutil.copyfile(path.resolve(), staging / path.name)
        lines = [f"{i:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}" for i, name in enumerate(LEXNAMES)]
        (staging / "lexnames").write_text("\n".join(lines) + "\n", encoding="utf-8")
        staging.chmod(0o755)  # mkdtemp's folder is owner-only; the copy it becomes is read by all
        _publish(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # what is left when another worker published first
    return target


def _complete(folder):
    return (folder / "lexnames").is_file() and (folder / "data.noun").is_file()


def _publish(staging, target):
    """Rename the finished copy into place: atomic, so a reader never sees a half-copied folder.
    A rename onto a folder with files in it fails: another worker finished first, and its copy
    stays, unless it is an incomplete one from an earlier version, which is replaced."""
    try:
        staging.rename(target)
    except OSError:
        if not _complete(target):
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)


@cache
def wordnet(data_dir=None):
    # nltk is imported on first use: it takes seconds to import and few runs need it
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    folder = build_wordnet_dir(data_dir)
    # NLTK only reads corpora under its data path (nltk.pathsec): register ours there
    root = str(folder.parent.parent)
    if root not in nltk.data.path:
        nltk.data.path.append(root)
    with warnings.catch_warnings():
        # Debian ships no Open Multilingual Wordnet; English is all METEOR uses
        warnings.filterwarnings("ignore", "The multilingual functions", UserWarning)
        return WordNetCorpusReader(str(folder), None)


def meteor_nltk(hyps, refs):
    from nltk.translate.meteor_score import meteor_score  # see wordnet()

    wn = wordnet()
    return [meteor_score([words(r) for r in rs], words(h), wordnet=wn) for h, rs in zip(hyps, refs, strict=True)]


def _family(batch, names):
    return {"meteor_nltk": meteor_nltk(batch.hyps, batch.refs)}


register(
    Metric(
        "meteor_nltk",
        "1",
        _family,
        {"implementation": "nltk.translate.meteor_score", "wordnet": "Debian wordnet-base 3.0"},
        "NLTK's METEOR with Debian's WordNet; differs from METEOR 1.5 (`meteor`).",
    )
)


def _load_wordnet():
    meteor_nltk(["warm"], [["warm"]])  # reads WordNet's files and imports NLTK's METEOR


WORDNET = resources.declare(
    resources.Resource("wordnet", "NLTK and WordNet", 6.0, _load_wordnet, lambda: wordnet.cache_info().currsize > 0)
)
describe_family(_family, "NLTK METEOR (WordNet)", (WORDNET.key,))
