"""How later layers (scoring, analysis) add to annotation's pages and exports without annotation importing
them: the extension points (`points`), annotation's own steps of the pipeline bar (`pipeline`), and how
the dataset page shows the scores they attach to a response (`score_display`).
"""
