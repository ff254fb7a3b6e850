"""The researcher's survey form."""

import json

from django import forms
from django.conf import settings

from annotation.crowd.prolific.pay import MINOR_UNITS, floor_problem, min_reward_cents
from annotation.crowd.prolific.study import DEFAULT_MINUTES, setup_problems
from annotation.forms.survey_fields import (
    ProviderSelect,
    SystemChoiceField,
    prolific_reward_help,
    prolific_unavailable_reason,
)
from annotation.kinds.rating.forms import ASPECT_DETAILS_HELP, gold_lines_parse
from annotation.kinds.registry import DEFAULT_KIND, all_kinds, kind_named
from annotation.models import Survey, System
from annotation.services.surveys import aspect_key_problem, instructions_by_type, reference_pairs_problem
from annotation.services.text.aspect_details import aspect_details_parse


class SurveyForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=None, help_text="The contexts and responses the study shows.")
    name = forms.CharField(max_length=200)
    task_type = forms.ChoiceField(choices=Survey.TaskType.choices, initial=DEFAULT_KIND)
    systems = forms.CharField(
        required=False,
        help_text="Comma-separated names of the systems whose replies are shown; empty means all of the dataset's "
        "systems.",
    )
    provider = forms.ChoiceField(
        required=False,  # a script's POST without it makes a survey on the built-in link, as before
        # The platforms a survey can be made for here; MTurk (closed to new requesters) is made with
        # `create_survey --provider mturk`.
        choices=[
            # The provider's own label, as the survey and dataset pages name it afterwards.
            (Survey.Provider.LOCAL, Survey.Provider.LOCAL.label),
            (Survey.Provider.PROLIFIC, "Prolific"),
            (Survey.Provider.LINK, "Another platform, by link and completion code (CloudResearch Connect, SONA, …)"),
        ],
        initial=Survey.Provider.LOCAL,
        widget=ProviderSelect,
        label="Participants from",
        help_text="Prolific: RateLab creates and publishes the study for you; you set the reward and estimated "
        "time on the survey's Prolific page before publishing. Another platform: you give it the study URL and "
        "its completion URL on the survey's link platform page.",
    )
    question = forms.CharField(
        required=False, initial="How appropriate is this response to the conversation?", widget=forms.TextInput
    )
    aspects = forms.CharField(
        required=False, help_text="Extra scales beside overall, comma-separated (e.g. topicality, informativeness)."
    )
    aspect_details = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="What the extra aspects mean (rating tasks only)",
        help_text=ASPECT_DETAILS_HELP,
    )
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), initial=Survey._meta.get_field("instructions").default
    )
    contexts_per_hit = forms.IntegerField(min_value=1, max_value=100, initial=5, label="Contexts per HIT")
    assignments_per_hit = forms.IntegerField(min_value=1, max_value=50, initial=3, label="Annotators per HIT")
    attention_checks_per_hit = forms.IntegerField(
        min_value=0, max_value=20, initial=1, label="Attention checks per HIT"
    )
    overlap_contexts = forms.IntegerField(min_value=0, max_value=100, initial=0, help_text="Rated by every annotator.")
    max_hits_per_annotator = forms.IntegerField(min_value=1, max_value=1000, initial=10, label="Max HITs per annotator")
    assignment_minutes = forms.IntegerField(min_value=1, max_value=24 * 60, initial=60, label="Minutes per assignment")
    new_annotators_per_address_hour = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=100_000,
        initial=10,
        label="New annotators per network address per hour",
        help_text="The study link accepts at most this many new annotators from one address in an hour "
        "(raise it for a lab where everyone shares one address).",
    )
    reward_cents = forms.IntegerField(
        min_value=0,
        max_value=10_000,
        initial=50,
        label="Reward per HIT (cents)",
        help_text="What one HIT pays: the cost estimate counts it. The built-in link pays nobody through RateLab; "
        "on another platform you pay it there.",
        # Prolific's own note (its floor, in the server's workspace currency) is made in __init__.
    )
    attention_policy = forms.ChoiceField(choices=Survey.AttentionPolicy.choices, initial=Survey.AttentionPolicy.FLAG)
    gold_checks = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Gold attention checks, one per line: context turns separated by | , then => the response "
        "=> the accepted scores, e.g. `Is fire cold? => Yes, freezing. => 1,2`. Speakers are added as the "
        "dataset names them; a turn written with one of its speakers (`A: Is fire cold?`) keeps that speaker, "
        "shown once. Each task shows a gold check in every other check block (instructed checks fill the "
        "rest): give enough for every task an annotator may do, or they meet the same check again.",
    )
    pair_budget = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=1000,
        initial=0,
        label="Comparisons per context (pairwise tasks only)",
        help_text="0 compares every pair of the chosen systems on every context; N spreads N comparisons per "
        "context evenly over the system pairs.",
    )
    reference_pairs = forms.ChoiceField(
        required=False,  # a script's POST without it compares no reference
        choices=Survey.ReferencePairs.choices,
        initial=Survey.ReferencePairs.NONE,
        label="Compare with the reference (pairwise tasks only)",
        help_text="Put the context's first reference against the systems' replies. Annotators see it as just "
        "another reply; your report names it 'reference'. Contexts without a reference are compared without it.",
    )
    allow_tie = forms.BooleanField(required=False, initial=True, label="Pairwise: allow 'about the same' (tie)")
    ask_strength = forms.BooleanField(required=False, label="Pairwise: ask how much better (slightly / clearly)")
    ask_reason = forms.BooleanField(required=False, label="Pairwise: ask for a one-line reason (optional)")
    max_position_bias = forms.FloatField(
        required=False,
        min_value=0.0,
        max_value=0.5,
        label="Pairwise: exclude position bias beyond (off when empty)",
        help_text="E.g. 0.3 excludes an annotator who picks the left reply in more than 80% (or under 20%) of "
        "their decisive choices.",
    )
    min_position_judgements = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=100_000,
        initial=20,
        label="Pairwise: decisive choices before position bias counts",
    )
    min_repeat_consistency = forms.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        label="Pairwise: exclude below this share of consistent swapped repeats (off when empty)",
    )
    min_repeats = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1000,
        initial=3,
        label="Pairwise: swapped repeats before consistency counts",
    )
    tuple_size = forms.IntegerField(
        required=False,
        min_value=3,
        max_value=8,
        initial=4,
        label="Replies per set (best-worst tasks only)",
        help_text="How many replies to one conversation each set shows; the annotator picks the best and the "
        "worst. Sets are drawn so each reply is shown about equally often, next to every other about equally often.",
    )
    bws_across_contexts = forms.BooleanField(
        required=False,
        label="Best-worst: sets of replies to different conversations",
        help_text="Each set shows replies to as many different conversations, each under its own, so replies are "
        "scaled against replies to other conversations too. Needs at least as many contexts per HIT as replies "
        "per set.",
    )
    max_pasted_share = forms.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        label="Integrity: exclude a worker with more than this share of replies flagged mostly pasted (off when empty)",
        help_text="Writing tasks: e.g. 0.5 excludes a worker more than half of whose replies were mostly pasted. "
        "A flag is evidence, not proof: decisions are listed on the quality page and can be overridden.",
    )
    min_competence = forms.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        label="Integrity: exclude a worker whose estimated competence (ordinal spammer model on a rating scale, "
        "MACE otherwise) is below this (off when empty)",
    )
    write_system_name = forms.CharField(
        required=False,
        label="System for written replies (writing tasks only)",
        help_text="Leave empty for rating tasks. In a writing task, accepted replies join this system.",
    )
    reference_llm_systems = forms.CharField(
        required=False,
        max_length=500,
        label="Reference LLM systems (writing tasks only, optional)",
        help_text="Systems of the dataset, comma-separated, whose responses are an LLM's replies to the same "
        "contexts (one system per sample, imported with the dataset). A written reply very like one of them is "
        "flagged on the quality page, with the similarity; a flag is evidence, not proof.",
    )
    layout_seed = forms.CharField(
        required=False,
        max_length=Survey._meta.get_field("layout_seed").max_length,
        label="Layout seed (optional)",
        help_text="Empty: HITs are laid out at random (which contexts go together, where the checks fall), "
        "and nobody can work the layout out. Any text: the same dataset and settings with the same seed are laid "
        "out the same way again, on any RateLab server, to repeat a study exactly. Anyone who knows the seed and "
        "the data can work out where the checks are: keep a live study's seed to yourself (the datasheet states it "
        "only once the survey is closed).",
    )

    SETTINGS = (
        "task_type",
        "provider",
        "instructions",
        "contexts_per_hit",
        "assignments_per_hit",
        "attention_checks_per_hit",
        "overlap_contexts",
        "max_hits_per_annotator",
        "assignment_minutes",
        "new_annotators_per_address_hour",
        "reward_cents",
        "attention_policy",
        "max_pasted_share",
        "min_competence",
        "layout_seed",
        *(name for kind in all_kinds() for name in kind.own_settings),
    )
    # Fields that only one task type reads: the page shows them for that type only (survey_form.js;
    # without the script every field shows, each labelled with its type).
    TASK_TYPE_OF_FIELD = {name: kind.name for kind in all_kinds() for name in (*kind.own_settings, *kind.own_fields)}

    def __init__(self, *args, datasets, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
        self.owner = owner
        for kind in all_kinds():
            self.fields.update(kind.form_fields(owner))  # a kind's own fields (the live chat's systems, turns)
        self._systems_as_checkboxes(datasets)
        for name, task_type in self.TASK_TYPE_OF_FIELD.items():
            self.fields[name].task_type = task_type  # read by the template, as the field's data-task-type
        # The page's script offers each task type's default texts as the type changes, where the
        # researcher has not written their own (survey_form.js); the service decides again on save.
        self.fields["instructions"].widget.attrs["data-defaults"] = json.dumps(instructions_by_type())
        # Choosing Prolific raises an untouched reward to Prolific's floor (survey_form.js), in the
        # currency this server's studies are paid in.
        currency = settings.PROLIFIC_CURRENCY
        reward = self.fields["reward_cents"]
        reward.prolific_help = prolific_reward_help(currency, workspace_known=bool(settings.PROLIFIC_WORKSPACE_ID))
        self._prolific_availability()
        reward.widget.attrs["data-prolific-min"] = min_reward_cents(DEFAULT_MINUTES, currency)
        # A kind without a question of its own asks the form's (the rating question).
        initial = self.fields["question"].initial
        self.fields["question"].widget.attrs["data-defaults"] = json.dumps(
            {kind.name: initial if kind.default_question is None else kind.default_question for kind in all_kinds()}
        )

    def _prolific_availability(self):
        """On a server that cannot publish on Prolific, the option says so and cannot be chosen (the
        refusal in clean still answers a script that posts it)."""
        reason = prolific_unavailable_reason()
        if not reason:
            return
        field = self.fields["provider"]
        field.choices = [
            (
                value,
                f"Prolific (not available on this server: {reason})" if value == Survey.Provider.PROLIFIC else label,
            )
            for value, label in field.choices
        ]
        field.widget.unavailable = frozenset({Survey.Provider.PROLIFIC})
        field.help_text += (
            f" Prolific is not available on this server ({reason}): whoever runs RateLab can set it up "
            "(docs/prolific.md)."
        )

    def _systems_as_checkboxes(self, datasets):
        """Where the dataset is known (chosen, or ?dataset= from its page), its systems are ticked
        from a list instead of typed: no typos. Otherwise the comma-separated field stays."""
        # Each dataset's systems, for the page's script to show the chosen one's as checkboxes at once
        # (survey_form.js); without the script they come after a round trip (Estimate), as typed names before.
        systems = {}
        for dataset_pk, name in (
            System.objects.filter(dataset__in=datasets).order_by("name").values_list("dataset_id", "name")
        ):
            systems.setdefault(str(dataset_pk), []).append(name)
        self.fields["dataset"].widget.attrs["data-systems"] = json.dumps(systems)
        chosen = self.data.get("dataset") if self.is_bound else self.initial.get("dataset")
        dataset = datasets.filter(pk=chosen).first() if str(chosen or "").isdigit() else None
        if dataset is None:
            return
        names = list(System.objects.filter(dataset=dataset).order_by("name").values_list("name", flat=True))
        self.fields["systems"] = SystemChoiceField(
            required=False,
            choices=[(name, name) for name in names],
            widget=forms.CheckboxSelectMultiple,
            help_text=f"Systems of {dataset.name} whose replies are shown; none ticked means all of them.",
        )

    def clean_systems(self):
        value = self.cleaned_data.get("systems") or []
        return value if isinstance(value, list) else [s.strip() for s in value.split(",") if s.strip()]

    def clean_new_annotators_per_address_hour(self):
        # Optional: an empty field keeps the model's default.
        value = self.cleaned_data["new_annotators_per_address_hour"]
        return value or Survey._meta.get_field("new_annotators_per_address_hour").default

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        # Unique per owner: another researcher's survey of this name is none of this user's business.
        if Survey.objects.filter(name=name, owner=self.owner).exists():
            raise forms.ValidationError("You already have a survey with this name.")
        return name

    def clean(self):
        data = super().clean()
        dataset = data.get("dataset")
        names = data.get("systems") or []
        if dataset and names:
            known = set(System.objects.filter(dataset=dataset).values_list("name", flat=True))
            missing = [n for n in names if n not in known]
            if missing:
                self.add_error("systems", f"Not in this dataset: {', '.join(missing)}.")
        data["system_names"] = names
        data["gold"] = self._gold(data.get("gold_checks") or "")
        data["aspect_keys"] = [a.strip() for a in (data.get("aspects") or "").split(",") if a.strip()]
        for problem in filter(None, map(aspect_key_problem, data["aspect_keys"])):
            self.add_error("aspects", problem)
        data["aspect_specs"] = self._aspect_specs(data)
        data["pair_budget"] = data.get("pair_budget") or 0
        data["tuple_size"] = data.get("tuple_size") or Survey._meta.get_field("tuple_size").default
        data["reference_pairs"] = data.get("reference_pairs") or Survey.ReferencePairs.NONE
        if dataset and not self.has_error("systems"):
            problem = reference_pairs_problem(
                dataset=dataset,
                task_type=data.get("task_type"),
                reference_pairs=data["reference_pairs"],
                systems=names,
            )
            if problem:
                self.add_error("reference_pairs", problem)
        for minimum in ("min_position_judgements", "min_repeats"):  # empty keeps the model's default
            data[minimum] = data.get(minimum) or Survey._meta.get_field(minimum).default
        kind = kind_named(data.get("task_type"))
        for field, problem in kind.form_problems(data):
            if not self.has_error(field):
                self.add_error(field, problem)
        if kind.default_question and data.get("question") == self.fields["question"].initial:
            data["question"] = ""  # the kind's own question ("Which reply is better?") replaces the rating one
        data["provider"] = data.get("provider") or Survey.Provider.LOCAL
        if data["provider"] == Survey.Provider.PROLIFIC and setup_problems():
            self.add_error(
                "provider",
                f"Prolific is not set up on this server: {'; '.join(setup_problems())}. Whoever runs RateLab sets "
                "them in its environment and restarts it (docs/prolific.md); until then choose the built-in link.",
            )
        self._prolific_floor(data)
        problem = kind.form_problem(data)
        if problem:
            self.add_error(*problem)
        return data

    def _prolific_floor(self, data):
        """Prolific refuses a reward under its hourly floor at launch: say so here, with the figures,
        in the currency the study will be paid in (PROLIFIC_CURRENCY; publishing checks it against
        the workspace when PROLIFIC_WORKSPACE_ID is set)."""
        reward = data.get("reward_cents")
        if data.get("provider") != Survey.Provider.PROLIFIC or reward is None:
            return
        currency = settings.PROLIFIC_CURRENCY
        problem = floor_problem(reward, DEFAULT_MINUTES, currency)
        if problem:
            self.add_error(
                "reward_cents",
                f"Prolific would refuse this study: {problem} Give at least "
                f"{min_reward_cents(DEFAULT_MINUTES, currency)} ({MINOR_UNITS[currency]} of {currency}); "
                "for a shorter task, lower the reward and the estimated minutes together on the survey's "
                "Prolific page.",
            )

    def _aspect_specs(self, data):
        """The extra aspects as survey_create takes them: keys, with the definitions and labels written
        for them where the survey rates (a comparison asks which reply is better: no scale to label)."""
        keys, text = data["aspect_keys"], data.get("aspect_details") or ""
        if not text.strip() or self.has_error("aspects"):
            return keys
        if not kind_named(data.get("task_type")).describes_aspects:
            self.add_error("aspect_details", "Definitions and scale labels are for rating tasks: leave this empty.")
            return keys
        details, problems = aspect_details_parse(text, dict.fromkeys(keys, (1, 5)))
        for problem in problems:
            self.add_error("aspect_details", problem)
        return [{"key": key, **details.get(key, {})} for key in keys]

    def _gold(self, text):
        checks, problems = gold_lines_parse(text)
        for problem in problems:
            self.add_error("gold_checks", problem)
        return checks

    def settings(self):
        return {key: self.cleaned_data[key] for key in self.SETTINGS}
