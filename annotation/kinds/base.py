"""What differs between kinds of task (rating, pairwise, writing, ...): one small interface.

The shared machinery (surveys, HITs, assignments, claims, providers, exclusions, the task page)
asks a survey's kind (`registry.kind_for(survey)`) wherever kinds differ, and never names a kind
itself: a new kind is a package implementing this class plus one line in `registry.py`.

The defaults below are the plainest behaviour (one question per shown reply, checks that pass or
fail one by one, no statistics of the kind's own); a kind overrides what it does otherwise.
"""

import random

from annotation.importing.errors import DataImportError
from annotation.models import Aspect, HITItem


def layout_seed(survey, purpose):
    """The seed of one random choice in the survey's layout: regenerating its HITs gives the same
    layout, and tests can rely on it. By default it is made of the survey's id and random token, so
    each survey lays out differently; a survey given a `layout_seed` lays the same data out the same
    way in every database (the demo's figures repeat from one build to the next)."""
    return f"{survey.layout_seed or f'{survey.pk}:{survey.token}'}:{purpose}"


def seeded_rng(survey, purpose):
    """A random generator seeded by `layout_seed(survey, purpose)`."""
    return random.Random(layout_seed(survey, purpose))


def _numbers_text(numbers):
    """[3] -> "3"; [3, 7] -> "3 and 7"; [2, 3, 7] -> "2, 3 and 7"."""
    shown = [str(n) for n in numbers]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


class HITLayoutError(Exception):
    """HITs cannot be (re)generated; the message is safe to show a researcher.

    Defined here, beside the interface, because every kind's layout raises it and the shared
    `services.hits` reports it: neither imports the other for it."""


class SubmissionRefused(Exception):
    """A submission was refused and nothing was stored; the message is safe to show the annotator.

    `missing`: the ids of the items left unanswered, for the page to mark next to each item.
    Defined beside the interface because each kind's `validated_rows` raises it and the shared
    submit service (`services.assignments`; `annotation.services` exports it) catches it.
    """

    def __init__(self, message, missing=()):
        super().__init__(message)
        self.missing = tuple(missing)


class TaskKind:
    """One kind of task. Instances are stateless; the registry holds one of each."""

    # The Survey.TaskType value this kind serves.
    name = ""
    # The analysis report section this kind contributes (its name in the sections registry), if any.
    report_section = None
    # Words for annotators and researchers (see annotation/views/task_page/wording.py for the keys).
    wording = {}
    # What the task page records besides the answers, in one plain sentence the start pages and the
    # task page show before any of it is recorded ("": nothing more; the writing kind: its telemetry).
    recorded = ""
    # The sentence the platforms' listings show, before `describe` adds the survey's details.
    description = ""
    # The overall question a new survey of this kind asks when the researcher gives none (None: the form's).
    default_question = None
    # Survey settings only this kind reads, and the survey form's fields only it has (not survey
    # settings): the form shows both only for it.
    own_settings = ()
    own_fields = ()
    # Whether the kind compares systems with the dataset's references (the reference pseudo-system).
    compares_with_reference = False
    # Whether the kind's aspects take definitions and scale labels (annotation.aspect_details).
    describes_aspects = False
    # The key of a simulated run's summary that counts its stored answers.
    answers_named = "ratings"
    # The file name stem of a survey export ("ratings.jsonl", "pairwise.csv").
    export_name = "ratings"
    # What the survey page's export buttons call the answers (None: the wording's `answers_lower`).
    export_label = None
    # One answer and several, as the survey list counts them ("1 rating", "3 judgements").
    answer_words = ("rating", "ratings")
    # Whether annotators write replies that join the dataset once a researcher accepts them (the
    # written-replies review pages), instead of answering questions about shown ones: such a survey
    # has no scales or attention checks, and no answers of its own to export.
    writes_responses = False
    # Whether the answers rate each response on a scale: what the correlation report's planning
    # panel sizes (more ratings per response).
    rates_responses = False
    # The kind's own paragraph of settings on the survey page (a template), if any.
    settings_template = None
    # Where the survey pages count a survey's answers (`selectors.studies`): the paths from one
    # answer (`counted_answers`) to its survey and to its annotator, and the related name of an
    # assignment's answers.
    answer_survey = "survey"
    answer_annotator = "annotator"
    assignment_answers = "ratings"
    # The annotator page: the template of one item's fieldset, the keyboard hint above the items
    # (None: none) and the page's script (a static path: a Content-Security-Policy forbids inline script).
    choice_template = ""
    hint_template = None
    page_script = "annotation/task.js"
    # A kind that lays its page out itself (`page_blocks`): the templates of its blocks (the first
    # is the one the shared _items.html includes) and the modules that lay them out, both digested
    # into the stored pages' version (task_page.stored). Empty: the shared blocks of turns and replies.
    block_templates = ()
    page_modules = ()
    # Scripts of the kind's own, loaded after `page_script` (static paths).
    page_extra_scripts = ()

    # -- a new survey ---------------------------------------------------------------------------
    def instructions(self, *, allow_tie=True):
        """The default instructions of a survey of this kind."""
        raise NotImplementedError

    def survey_problem(self, survey):
        """Why a survey of this kind cannot be created as given (None when it can)."""
        return None

    def form_problem(self, data):
        """`(field, message)` when the survey form's cleaned `data` lacks what this kind needs, else None."""
        return None

    def default_aspects(self, dataset):
        """The questions a new survey of this kind over `dataset` asks when the researcher names none
        besides the overall one, as `services.surveys._aspect_spec` reads them (dicts), overall
        included; None: the overall question alone."""
        return None

    def aspect_question(self, label):
        """The question an extra aspect named `label` asks when the researcher gives none (None: the
        shared rating question)."""
        return None

    def reference_pairs_problem(self, *, dataset, reference_pairs, systems=()):
        """Why a survey of this kind cannot compare with the dataset's references as asked (None when
        it can); only asked when the researcher asked for reference pairs."""
        return "Comparing with the reference is for pairwise (A/B) surveys only."

    def planned_units(self, dataset):
        """How many contexts (or whatever a HIT's unit is: conversations, pairs) a survey of this kind
        over `dataset` lays out, for the survey form's estimate."""
        return dataset.contexts.count()

    def estimate(self, *, n_contexts, n_systems, contexts_in_first_hit, regular, overlap, settings):
        """`(items_per_hit, seconds_per_hit, answers)` of a planned layout (`services.estimates.survey_estimate`)."""
        raise NotImplementedError

    def gold_shortfall(self, **counts):
        """The researcher's warning ("" for none) when annotators would meet a gold check twice."""
        return ""

    # -- HITs ---------------------------------------------------------------------------------
    def hits_layout(self, *, survey, contexts):
        """Lay the survey's contexts (ids in dataset order) out as HITs and their items; the HITs, saved.
        (`services.hits.hits_generate` clears the old ones before and adds the slots after.)"""
        raise NotImplementedError

    def estimated_seconds(self, *, items, n_aspects, survey=None):
        """The time a task of `items` items takes before any was measured (annotation.kinds.timing)."""
        raise NotImplementedError

    # -- the annotator page -------------------------------------------------------------------------
    def scales(self, survey):
        """The questions every item of the survey's page asks, as the item templates read them."""
        raise NotImplementedError

    def block_options(self, survey):
        """What each block of the page offers besides its questions (the item template reads them)."""
        return {"ask_strength": False, "allow_tie": False, "ask_reason": False}

    def describe(self, survey):
        """One sentence for the platforms' listings: what an annotator does."""
        return self.description

    def page_blocks(self, *, survey, items, scales, previous, missing):
        """The page's blocks when the kind lays them out itself (each with `template`: the first of
        its `block_templates`), or None for the shared layout (annotation.views.task_page.items)."""
        return None

    # -- submissions -------------------------------------------------------------------------------
    def unanswered(self, *, items, answers, aspects):
        """Ids of the items with no answer, an empty written reply, or a question left out."""
        missing = []
        for item in items:
            answer = answers.get(item.pk)
            if answer is None:
                missing.append(item.pk)
            elif item.kind == HITItem.Kind.WRITE:
                if not (answer.get("text") or "").strip():
                    missing.append(item.pk)
            else:
                wanted = self.answer_keys(item, aspects)
                given = {key for key, value in (answer.get("scores") or {}).items() if str(value).strip()}
                if not wanted <= given:
                    missing.append(item.pk)
        return missing

    # What the page calls one item in a message about it (singular, plural).
    page_item = ("reply", "replies")

    def missing_message(self, numbers):
        """The summary of a submission with items left out, naming them by the numbers the page shows."""
        one, many = self.page_item
        if len(numbers) == 1:
            return f"Please answer every item: {one} {numbers[0]} is still unanswered (marked below)."
        return f"Please answer every item: {many} {_numbers_text(numbers)} are still unanswered (marked below)."

    def answer_keys(self, item, aspects):
        """The answer keys (`score-<item>-<key>`) a submission must give for `item`: every question
        but for a lone instructed check, which asks the main one only (see task_page.items)."""
        return {Aspect.OVERALL} if item.asks_main_only else set(aspects)

    def validated_rows(self, *, assignment, annotator, survey, items, answers, aspects):
        """Parse and check one submission: `(answers, checks, written)` rows to store, unsaved.
        Raises `SubmissionRefused` on a problem."""
        raise NotImplementedError

    def failed_checks(self, checks, items):
        """How many checks of the submission failed (it is flagged when any did)."""
        return sum(not check.passed for check in checks)

    def answer_model(self):
        """The model that stores the kind's answers (the first list of `validated_rows`)."""
        raise NotImplementedError

    def store_answers(self, rows):
        """Store the first list of `validated_rows` inside the submit's transaction (a unique
        constraint broken raises IntegrityError, which undoes the whole submission)."""
        self.answer_model().objects.bulk_create(rows)

    def counted_answers(self):
        """The model of the rows the survey pages count as the survey's answers."""
        return self.answer_model()

    def answer_distribution(self, *, survey, annotator, scale):
        """`(distribution, n)`: how often one annotator gave each answer (label, count) in the survey,
        and how many answers in all, for their quality page. `scale`: the report's labels."""
        raise NotImplementedError

    # -- import / export ---------------------------------------------------------------------------
    def answers_import(self, *, file, dataset, **options):
        """Import a file of this kind's answers into `dataset` as a closed survey of its own; the survey.
        A kind without a file format of its own (writing: its replies join the dataset) refuses."""
        raise DataImportError(f"RateLab reads no file of {self.wording['answers_lower']} to import.")

    def export(self, *, dataset, survey, stream, fmt, real_ids=False):
        """Write the survey's answers to `stream` as JSONL or CSV."""
        raise NotImplementedError

    # -- quality -----------------------------------------------------------------------------------
    def quality_rows(self, survey):
        """What the quality rules judge, as rating rows (`annotator_id`, `response_id`, `score`, ...)."""
        raise NotImplementedError

    def quality_scale(self, survey):
        """The labels those rows take, in order."""
        raise NotImplementedError

    # Whether the labels are nominal (kappa never weighted) rather than ordinal.
    nominal = False

    # Whether the quality rows are ratings on an evenly spaced number scale, so that each worker's competence
    # is estimated with the ordinal spammer model (issue 40) rather than MACE's categories.
    rates_on_a_scale = False

    # The quality pages' words for the kind's answers: a survey's and an annotator's count (`answers`),
    # in sentences (`answers_lower`), in the surveys' list (`listed`), what one timed answer is
    # (`per_item`), what the counted units are (`units`, `units_note`), the annotator's distribution
    # (`given`) and the level of Krippendorff's alpha (`alpha`).
    quality_words = {
        "answers": "Ratings",
        "answers_lower": "ratings",
        "listed": "ratings (overall)",
        "per_item": "rated item",
        "units": "responses",
        "units_note": ", overall question",
        "given": "Scores given",
        "alpha": "ordinal",
    }
    # Whether split-half reliability applies (it correlates mean 1-5 scores).
    quality_split_half = True
    # The kind's own parts of the quality pages (templates, None: none): a paragraph above the survey's
    # figures, its rules inside the rules sentence, and tiles of the annotator's figures.
    quality_intro_template = None
    quality_rules_template = None
    quality_annotator_template = None
    # What the dataset page counts for each of its surveys: the survey's annotated count and its word.
    dataset_count = ("n_ratings", "ratings")

    # The one question the rules judge, or None when they judge every question (`quality_aspects`).
    quality_aspect = Aspect.OVERALL

    def quality_aspects(self, survey):
        """The questions the rules judge (keys)."""
        return [self.quality_aspect]

    def quality_strata(self, survey):
        """`{question: scale}` when the rules judge several questions each on its own scale (the
        rows then carry their `aspect`; agreement is computed per question and combined), else None:
        one scale (`quality_scale`) for every row."""
        return None

    def pair_counts(self, survey):
        """Evidence of the kind's own rules (position, repeats), or None when it has none."""
        return None

    def rule_settings(self, survey):
        """The survey settings of the kind's own quality rules, by name ({} when it has none)."""
        return {}

    def fingerprint_parts(self, survey):
        """What else, besides ratings and decisions, changes the kind's quality report."""
        return []

    def quality_extras(self, survey):
        """Statistics of the kind's own for the quality report (merged in), or {}."""
        return {}

    def reference_llm_samples(self, survey, context_ids):
        """`{context id: [(sample name, text)]}`: a reference LLM's replies to these contexts, which the
        integrity section compares written replies with (issue 40); {} for kinds that write nothing."""
        return {}

    # -- the survey form ----------------------------------------------------------------------------
    def form_fields(self, owner):
        """Fields only this kind asks on the survey form, by name (listed in `own_fields` too, so the
        page shows them for this kind only); `owner`: the researcher filling it in."""
        return {}

    def form_problems(self, data):
        """(field, message) pairs for what this kind needs and the form's cleaned `data` lacks."""
        return []

    def form_create(self, *, data, common):
        """The survey the form makes when the kind makes it itself (a live chat survey), else None:
        the shared `survey_create` with `common`."""
        return None

    def form_initial(self, survey):
        """A draft's values of this kind's own form fields (its edit page)."""
        return {}

    # -- the create_survey command -------------------------------------------------------------------
    def add_command_arguments(self, parser):
        """Add the options only this kind reads to `create_survey`'s parser (none by default)."""

    def command_create(self, *, dataset, owner, options):
        """The survey `create_survey` makes from `options` when the kind makes it itself (a live chat
        survey: its chat systems and turns), else None: the command's shared `survey_create`."""
        return None

    # -- the demo ----------------------------------------------------------------------------------
    def simulated_answers(self, annotator, *, items, aspects, survey):
        """A simulated annotator's answers to the items an assignment shows, by item id
        (`kinds.simulated.SimulatedAnnotator`, driven by annotation.services.demo_data.simulation)."""
        raise NotImplementedError
