"""Recompute a survey's quality report now (exclusion rules, agreement, split-half)."""

import json

from django.core.management.base import BaseCommand

from annotation.management.cli import add_owner_argument, survey_or_error
from annotation.quality.services import quality_recompute


class Command(BaseCommand):
    help = "Recompute the quality report of a survey (by name or id) and print its summary."

    def add_arguments(self, parser):
        parser.add_argument("survey", help="Survey name or numeric id.")
        add_owner_argument(parser)
        parser.add_argument("--json", action="store_true", help="Print the whole report as JSON.")

    def handle(self, *args, **options):
        survey = survey_or_error(options["survey"], options["owner"])
        cached = quality_recompute(survey=survey)
        content = cached.data
        if options["json"]:
            self.stdout.write(json.dumps(content, indent=2))
            return
        self.stdout.write(self._summary(content, cached.seconds))

    @staticmethod
    def _summary(content, seconds):
        def fmt(value):
            return "n/a" if value is None else f"{value:.3f}"

        split = content["split_half"]
        lines = [
            f"survey {content['survey_name']}: {content['n_ratings']} ratings, {content['n_annotators']} annotators, "
            f"{content['n_excluded']} excluded ({seconds:.2f} s)",
            # Each clause one population (browser walk F01: kappa over all beside alpha over accepted).
            f"agreement, all annotators: median kappa {fmt(content['median_kappa'])}, "
            f"Krippendorff's alpha {fmt(content['alpha_all'])}; accepted annotators only: median kappa "
            f"{fmt(content['median_kappa_accepted'])}, Krippendorff's alpha {fmt(content['alpha'])}",
            f"split-half ({split['mode']}, {split['n_splits']} splits): pearson {fmt(split['pearson']['mean'])} "
            f"± {fmt(split['pearson']['std'])}, spearman {fmt(split['spearman']['mean'])} "
            f"± {fmt(split['spearman']['std'])}",
        ]
        threshold = (content.get("settings") or {}).get("kappa_threshold")
        rule = f"; the exclusion rule needs at least {threshold:g}" if threshold is not None else ""
        weighting = (content.get("settings") or {}).get("kappa_weighting") or "none"
        weighted = "" if weighting == "none" else f"{weighting}-weighted "
        lines.append(
            f"Per annotator, kappa = their mean {weighted}Cohen's kappa with the annotators who agree with one another "
            f"(what the kappa rule compares{rule}):"
        )
        for entry in content["annotators"]:
            # One kappa per line, the one the rule judged (browser walk F31: the plain mean beside
            # the rule's own figure read as two kappas for one annotator).
            kappa = entry.get("kappa_judged", entry.get("kappa"))
            verdict = "ok"
            if entry["excluded"]:
                why = [
                    f"kappa below {r['threshold']:g}" if r.get("rule") == "kappa" and "threshold" in r else r["detail"]
                    for r in entry["reasons"]
                ]
                verdict = "EXCLUDED: " + "; ".join(why)
            lines.append(f"  {entry['worker']}: kappa {fmt(kappa)}, {entry['n_ratings']} ratings, {verdict}")
        return "\n".join(lines)
