# RateLab: `make demo` sets up and runs the main job; `make test` sets up and runs the tests.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Debian packages: Java for METEOR 1.5, WordNet for NLTK's METEOR, Chromium for the browser tests.
DEBIAN_PACKAGES := default-jre-headless wordnet-base wordnet-sense-index chromium

.PHONY: demo test setup system-packages lint bench clean

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

system-packages:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	elif command -v sudo >/dev/null && command -v apt-get >/dev/null; then \
	  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "Note: could not install$$missing (no apt-get/sudo); METEOR and the browser tests need them."; fi

setup: $(BIN)/.installed system-packages

# The demo runs as production does (debug off, static files collected and served by WhiteNoise) on
# plain-http localhost: RATELAB_DEMO=1 (config/settings.py). Its judges may use a model served on this
# machine (127.0.0.1): JUDGE_ALLOW_PRIVATE_HOSTS=1 on the server is the operator's opt-in.
demo: export RATELAB_DEMO = 1
demo: setup
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	$(BIN)/python manage.py demo --base-url http://$(HOST):$(PORT)
	# The live chat survey's bot (annotation/kinds/chat/demo.py) runs beside the server, and stops with it.
	$(BIN)/python manage.py demo_bot --port 8765 & bot=$$!; trap 'kill $$bot' EXIT INT TERM; \
	JUDGE_ALLOW_PRIVATE_HOSTS=1 $(BIN)/python manage.py runserver $(HOST):$(PORT)

# lint-imports holds the import-linter contracts in pyproject.toml (layers, pure packages, boto3).
test: setup
	$(BIN)/lint-imports
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) ratelab.sqlite3* staticfiles var media
