# The README's promises: `make run` serves SCIM on a real local slapd, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SCIM_PORT ?= 8080

.PHONY: run test bench soak lint typing clean system-deps venv

# Debian's slapd and ldap-utils, installed when missing (as root); otherwise say what to install.
system-deps:
	@if [ ! -x /usr/sbin/slapd ] || ! command -v slapadd >/dev/null || ! command -v ldapwhoami >/dev/null; then \
	  if [ "$$(id -u)" -ne 0 ]; then \
	    echo "slapd is missing: run 'sudo apt-get install slapd ldap-utils' and try again." >&2; exit 1; \
	  fi; \
	  echo "Installing Debian packages slapd and ldap-utils..." >&2; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slapd ldap-utils >/dev/null; \
	fi

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

venv: $(BIN)/python
	@$(BIN)/pip install --quiet -e '.[test]' tox

run: system-deps venv
	@SCIM_PORT=$(SCIM_PORT) $(BIN)/python examples/dev_server.py

test: system-deps venv
	$(BIN)/tox -e lint,typing,py311

lint: venv
	$(BIN)/tox -e lint

typing: venv
	$(BIN)/tox -e typing

clean:
	rm -rf $(VENV) .tox build dist *.egg-info
