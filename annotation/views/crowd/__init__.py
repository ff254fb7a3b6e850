"""The crowd providers' pages: where a platform's participants enter (`*_entry`, and MTurk's frame) and
the researcher's page for a survey run on that platform (`*_survey`, and MTurk's pages)."""
