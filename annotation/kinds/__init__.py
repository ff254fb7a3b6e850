"""Kinds of task (rating, pairwise, writing): one package each behind `base.TaskKind`, listed in
`registry.py`. The shared machinery asks `registry.kind_for(survey)` wherever kinds differ."""
