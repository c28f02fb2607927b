# The README's promises: `make run` serves SCIM on a real local slapd, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SCIM_PORT ?= 8080

.PHONY: run test bench soak lint typing clean system-deps venv docs release

# The Debian packages of the three directories the tests run on (OpenLDAP, 389-DS, a Samba AD
# DC), of the allocator the throwaway slapd runs with (tcmalloc: big groups) and of nginx (the
# reverse-proxy recipe's test), installed when one is missing (as root); otherwise say what to
# install.
DEBIAN_PACKAGES := slapd ldap-utils libtcmalloc-minimal4 389-ds-base samba samba-ad-dc \
    samba-ad-provision nginx-light
system-deps:
	@if [ ! -x /usr/sbin/slapd ] || ! command -v ldapwhoami >/dev/null || [ ! -x /usr/sbin/ns-slapd ] \
	    || ! /sbin/ldconfig -p | grep -q libtcmalloc_minimal.so.4 \
	    || ! command -v dscreate >/dev/null || [ ! -x /usr/sbin/samba ] || [ ! -d /usr/share/samba/setup ] \
	    || [ ! -x /usr/sbin/nginx ]; then \
	  if [ "$$(id -u)" -ne 0 ]; then \
	    echo "directories missing: run 'sudo apt-get install $(DEBIAN_PACKAGES)' and try again." >&2; exit 1; \
	  fi; \
	  echo "Installing Debian packages $(DEBIAN_PACKAGES)..." >&2; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(DEBIAN_PACKAGES) >/dev/null; \
	fi

# The deployment tests' tools (`make test` only): systemd-analyze checks the example unit
# (Debian's systemd package, with procps for kill); podman, buildah, runc and debootstrap build
# the container image on a local Debian base and run it. Installed when one is missing (as root).
DEPLOY_PACKAGES := systemd procps podman buildah runc debootstrap
.PHONY: deploy-deps
deploy-deps:
	@if ! command -v systemd-analyze >/dev/null || [ ! -x /bin/kill ] || ! command -v podman >/dev/null \
	    || ! command -v buildah >/dev/null || ! command -v runc >/dev/null \
	    || ! command -v debootstrap >/dev/null; then \
	  if [ "$$(id -u)" -ne 0 ]; then \
	    echo "deployment tools missing: run 'sudo apt-get install $(DEPLOY_PACKAGES)' and try again." >&2; exit 1; \
	  fi; \
	  echo "Installing Debian packages $(DEPLOY_PACKAGES)..." >&2; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(DEPLOY_PACKAGES) >/dev/null; \
	fi

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# The whole service and the test tools (the core alone needs no extra: see README).
venv: $(BIN)/python
	@$(BIN)/pip install --quiet -e '.[server,test]' tox

# DIRECTORY=openldap (default), 389ds or ad.
DIRECTORY ?= openldap
run: system-deps venv
	@DIRECTORY=$(DIRECTORY) SCIM_PORT=$(SCIM_PORT) $(BIN)/python examples/dev_server.py

test: system-deps deploy-deps venv
	$(BIN)/tox -e lint,typing,py311,plain-ldap3,docs,release,mutation

# The suite with SCIM_LDAP_FAST_PATH=off (plain ldap3 for every directory operation) on
# OpenLDAP and 389-DS (`make test` runs it on OpenLDAP).
.PHONY: test-plain-ldap3
test-plain-ldap3: system-deps venv
	SCIM_TEST_DIRECTORIES=openldap,389ds $(BIN)/tox -e plain-ldap3

lint: venv
	$(BIN)/tox -e lint

typing: venv
	$(BIN)/tox -e typing

# The benchmark: 100,000 users, the service against its floor, about 10 minutes; writes
# bench/results/latest.{json,md,png}. Installs wrk (apt, as root), matplotlib and py-spy (.venv).
# Another size: `make bench USERS=1000000 MEMBERS=100000` (1M users load in under a minute).
.PHONY: bench-smoke
bench: system-deps venv
	$(BIN)/python -m bench $(if $(USERS),--users $(USERS)) $(if $(MEMBERS),--members $(MEMBERS))

# The same run on a tiny directory in seconds (tests/integration/test_bench_smoke.py runs it too).
bench-smoke: system-deps venv
	$(BIN)/python -m bench --smoke --output $${TMPDIR:-/tmp}/scim-bench-smoke

# The scale curve on OpenLDAP: the same figures at 10,000, 100,000 and 1,000,000 users (each
# with a group of a tenth of them) in one process without HTTP, against their targets; about
# 1.6 minutes on 2 cores (measured). Other sizes: `make bench-scale SIZES=10000,100000`;
# OUTPUT=FILE writes the table there too (bench/results/scale.md when OUTPUT=bench/results/scale.md).
.PHONY: bench-scale
bench-scale: system-deps venv
	$(BIN)/python -m bench.scale $(if $(SIZES),--sizes $(SIZES)) $(if $(OUTPUT),--output $(OUTPUT))

# The service per directory (OpenLDAP, 389-DS, Samba AD, one after the other): filtered-GET
# throughput and the read of a 10,000-member group; bench/results/directories.{json,md}.
.PHONY: bench-directories
bench-directories: system-deps venv
	$(BIN)/python -m bench.directories

# The service under attack (gunicorn as shipped, on a throwaway slapd, about 2 minutes): attacks
# tried, 5xx seen, peak memory per worker under the largest bodies, availability with idle and
# slow clients connected, answers during an outage; bench/results/hostile.{json,md}. Exit status
# 1 when a rule was broken.
.PHONY: hostile
hostile: system-deps venv
	$(BIN)/python -m bench.hostile

# The container image (Containerfile) as $(IMAGE): with buildah when installed, else podman or
# docker. BASE is the image it builds on (a Debian bookworm one: the official Python image by
# default, or plain Debian); ISOLATION is buildah's and podman's for the RUN steps (chroot works
# without a container runtime set up for nesting). Behind a proxy that re-signs TLS, PIP_CERT
# (a CA bundle on this machine, as pip reads it) is mounted for pip inside the build.
IMAGE ?= localhost/scim-ldap
BASE ?= python:3.11-slim-bookworm
ISOLATION ?= chroot
.PHONY: image
image:
	@set -e; \
	if command -v buildah >/dev/null; then build="buildah bud --isolation $(ISOLATION) --format docker"; \
	elif command -v podman >/dev/null; then build="podman build --isolation $(ISOLATION) --format docker"; \
	elif command -v docker >/dev/null; then build="docker build"; \
	else echo "make image needs buildah, podman or docker" >&2; exit 1; fi; \
	cert=""; \
	if [ -n "$(PIP_CERT)" ] && [ "$${build%% *}" != docker ]; then \
	  cert="--volume $(PIP_CERT):/run/pip-cert.pem:ro --build-arg PIP_CERT=/run/pip-cert.pem"; \
	fi; \
	echo "$$build --build-arg BASE=$(BASE) -t $(IMAGE) ." >&2; \
	$$build $$cert --build-arg BASE=$(BASE) -t $(IMAGE) -f Containerfile .

# The Sphinx site in docs/_build/html (warnings are errors).
docs: venv
	$(BIN)/tox -e docs

# Build the sdist and wheel, check them and install the wheel in a clean virtualenv.
release: venv
	$(BIN)/tox -e release

# Long fault, failover, concurrency and fuzzing runs (about 25 minutes): docs/reliability.md.
soak: system-deps venv
	SCIM_SOAK=1 $(BIN)/python -m pytest -q -p no:cacheprovider -s \
	  tests/integration/test_outage_load.py tests/integration/test_failover.py \
	  tests/integration/test_concurrency.py tests/integration/test_openapi.py

# The mutation score of the core and the LDAP plugin's pure modules (setup.cfg [mutmut])
# against the fast tests; survivors re-run with the project imported afresh, on the test files
# that reach them. MUTATION_JOBS workers (default 2: a 2-core machine); writes
# bench/results/mutation.md and fails when a module is below its floor there.
.PHONY: mutation
MUTATION_JOBS ?= 2
mutation: venv
	@$(BIN)/pip install --quiet -e '.[mutation]'
	rm -rf mutants
	$(BIN)/python -m bench.mutation --jobs $(MUTATION_JOBS) --output bench/results/mutation.md

clean:
	rm -rf $(VENV) .tox build dist *.egg-info mutants
