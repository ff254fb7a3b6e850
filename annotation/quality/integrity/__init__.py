"""Crowd integrity: pure engines (no Django) for issue 40.

- `coding`: answers `(worker, item, label)` turned into index arrays the models share.
- `mace`, `dawid_skene`: reliability models that estimate each worker's competence and each item's
  posterior over the true answer.
- `normalise`: per-worker z-scores (as WMT's direct assessment does) and competence-weighted item scores.
- `similarity`, `writing_flags`, `rating_flags`: detectors that return their evidence (numbers), never a
  verdict; `thresholds` holds every default they compare against, in one place.
- `simulation`: a seeded crowd with known careful, careless, straight-lining, pasting and copying
  workers, for the detector bench (bench/bench_integrity.py) and the demo.
"""
