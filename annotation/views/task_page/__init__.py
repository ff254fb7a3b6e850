"""The annotator's task page, shared by every kind of task and every provider: the items of a HIT
as blocks (`items`), the page's context and item HTML (`display`), HIT pages rendered once and
stored (`stored`), the start page's facts (`facts`) and the task's words
(`wording`). What differs between kinds is asked of the survey's kind (annotation/kinds/)."""
